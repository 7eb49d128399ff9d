"""bench/worked_example.py's steps on the knobs board (no jitter, so each gain is its
truth): each step boots with every knob accepted before it, its row holds the measured
gain, the truth on the board as it stood and the power-to-UI after it; a rule the board
is not advised is a row saying so, without boots."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.worked_example import merged, run_steps, step_from_trial, table
from rig.model.knob import Knob
from simboard.knob_truth import POWER_TO_UI, durations, knob_truth, with_knob
from simboard.timeline import load
from tests.e2e import REPO, make_config

BOARD = REPO / "tests" / "data" / "boards" / "knobs.toml"


def test_merged_lets_a_later_setting_of_a_key_win() -> None:
    sets = merged({}, ['sim.uboot_env.bootdelay="0"', 'sim.kernel_args="quiet"'])
    sets = merged(sets, ['sim.kernel_args="quiet lpj=1495040"'])
    assert list(sets.values()) == [
        'sim.uboot_env.bootdelay="0"',
        'sim.kernel_args="quiet lpj=1495040"',
    ]


def _trial(verdict: str, kept: bool) -> dict[str, object]:
    """A try.json trial of `verify=no` (its measured part as rig try writes it)."""
    knob = {"kind": "uboot_env", "text": "", "op": "set", "name": "verify", "value": "no"}
    measured = {"gain_s": 0.02, "ci_low_s": -0.1, "ci_high_s": 0.15, "verdict": verdict,
                "outcome_kept": kept}  # fmt: skip
    return {"rule": "image_verify", "knob": knob, "sets": ['sim.uboot_env.verify="no"'],
            "measured": measured, "comparison": {"median_after_s": 2.7}}  # fmt: skip


@pytest.mark.parametrize(
    ("verdict", "kept", "stays"),
    [("gained", True, True), ("no_gain", True, True), ("inconclusive", True, True),
     ("slower", True, False), ("broke", False, False), ("gained", False, False)],
)  # fmt: skip
def test_a_knob_stays_unless_the_boots_showed_harm(verdict: str, kept: bool, stays: bool) -> None:
    board = load(BOARD)
    verify = Knob("uboot_env", "", "set", "verify", "no")
    step, after = step_from_trial(2, _trial(verdict, kept), board)
    assert (step.accepted, step.knob, step.verdict) == (stays, "verify=no", verdict)
    assert step.truth_s == pytest.approx(knob_truth(board, verify)) and step.inside
    assert durations(after) == durations(with_knob(board, verify) if stays else board)
    assert step.nominal_after_s == durations(after)[POWER_TO_UI]


def test_each_step_boots_with_the_knobs_before_it(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, board=str(BOARD))
    rules = ("uboot_bootdelay", "calibrate_delay", "usb_probe")
    steps, after = run_steps(cfg, BOARD, rules, pairs=4, seed=0)
    assert [s.rule for s in steps] == list(rules)
    delay = Knob("uboot_env", "", "set", "bootdelay", "0")
    lpj = Knob("kernel_arg", "", "set", "lpj", "1495040")
    board = load(BOARD)
    truths = [knob_truth(board, delay), knob_truth(with_knob(board, delay), lpj)]
    nominal = [
        durations(with_knob(board, delay)),
        durations(with_knob(with_knob(board, delay), lpj)),
    ]
    for step, truth, nom in zip(steps, truths, nominal, strict=False):
        assert step.verdict == "gained" and step.accepted, step
        assert step.truth_s == pytest.approx(truth, abs=1e-9) and step.inside, step
        assert step.gain_s == pytest.approx(truth, abs=5e-6), step
        # the boots with lpj= also had bootdelay=0: the step's power-to-UI is both knobs'
        assert step.after_s == pytest.approx(nom[POWER_TO_UI], abs=5e-6), step
        assert step.nominal_after_s == pytest.approx(nom[POWER_TO_UI], abs=1e-9)
    assert durations(after) == durations(with_knob(with_knob(board, delay), lpj))
    usb = steps[2]
    assert (usb.verdict, usb.accepted, usb.gain_s, usb.inside) == (
        "not advised",
        False,
        None,
        False,
    )
    text = table(steps, durations(board)[POWER_TO_UI]).splitlines()
    assert len(text) == 3 + len(rules)
    assert text[3].startswith("| 1 | uboot_bootdelay | bootdelay=0 | bootloader 2300.0 | 1000.5 |")
    assert "| 3 | usb_probe |" in text[5] and "| not advised |" in text[5]
