"""`rig try`'s judgement (pure) and where a knob goes on a target (rig/trial/)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rig import names
from rig.compare.stats import Settings, compare
from rig.instruments.drivers import load_config
from rig.model.knob import Knob
from rig.trial.knobs import Untryable, apply_kernel_arg, console_changes, overrides
from rig.trial.stats import ABOVE, BELOW, BROKE, EXCEEDED, GAINED, HOLDS, NO_GAIN, WITHIN, judge
from tests.e2e import make_config

WITHOUT = [1.00, 1.01, 1.02, 1.03, 1.04, 1.05]
WITH = [0.50, 0.51, 0.52, 0.53, 0.54, 0.55]  # 0.5 s faster
OK = ["ok"] * 6


def _cmp(before: list[float], after: list[float]):  # type: ignore[no-untyped-def]
    return compare(names.TOTAL, before, after, Settings(alpha=0.05))


def test_a_gain_is_without_minus_with_and_the_prediction_is_placed_in_its_interval() -> None:
    g = judge(_cmp(WITHOUT, WITH), 0.5, "measured", OK, OK)
    assert g.verdict == GAINED and g.gain_s == pytest.approx(0.5)
    assert g.ci_low_s is not None and g.ci_high_s is not None
    assert 0.4 < g.ci_low_s <= 0.5 <= g.ci_high_s < 0.6
    assert g.prediction == WITHIN and g.outcome_kept
    assert judge(_cmp(WITHOUT, WITH), 0.9, "estimate", OK, OK).prediction == ABOVE
    assert judge(_cmp(WITHOUT, WITH), 0.1, "estimate", OK, OK).prediction == BELOW
    # An upper bound holds unless the gain is sure to exceed it.
    assert judge(_cmp(WITHOUT, WITH), 0.9, "upper_bound", OK, OK).prediction == HOLDS
    assert judge(_cmp(WITHOUT, WITH), 0.1, "upper_bound", OK, OK).prediction == EXCEEDED


def test_no_difference_is_no_gain_and_a_changed_outcome_is_broke_whatever_the_times() -> None:
    assert judge(_cmp(WITHOUT, list(reversed(WITHOUT))), 0.5, "measured", OK, OK).verdict == NO_GAIN
    hung = ["ok"] * 5 + ["hang_in_kernel"]
    g = judge(_cmp(WITHOUT, WITH), 0.5, "measured", OK, hung)
    assert g.verdict == BROKE and not g.outcome_kept
    assert g.outcomes_with == {"ok": 5, "hang_in_kernel": 1}
    assert judge(_cmp(WITHOUT, []), 0.5, "measured", OK, []).verdict == BROKE


def _arg(op: str, name: str, value: str | None = None) -> Knob:
    return Knob(names.KNOB_KERNEL_ARG, "", op, name, value)


def test_a_kernel_argument_is_set_once_and_removed_entirely() -> None:
    key = "qemu.kernel_args"
    assert apply_kernel_arg("", _arg(names.KNOB_SET, "quiet"), key) == "quiet"
    assert apply_kernel_arg("lpj=1 loglevel=8", _arg(names.KNOB_SET, "lpj", "2"), key) == (
        "loglevel=8 lpj=2"
    )
    assert apply_kernel_arg("rootdelay=1 quiet", _arg(names.KNOB_REMOVE, "rootdelay"), key) == (
        "quiet"
    )
    with pytest.raises(Untryable, match=r"rootdelay is not in qemu\.kernel_args"):
        apply_kernel_arg("quiet", _arg(names.KNOB_REMOVE, "rootdelay"), key)


def test_a_target_without_a_kernel_argument_key_cannot_take_one(tmp_path: Path) -> None:
    # A board on real instruments: neither the simulator's nor QEMU's settings.
    cfg = dataclasses.replace(load_config(make_config(tmp_path)), sim=None)
    with pytest.raises(Untryable, match="takes no kernel arguments from the rig"):
        overrides(_arg(names.KNOB_SET, "quiet"), cfg)
    env = Knob(names.KNOB_UBOOT_ENV, "", names.KNOB_SET, "bootdelay", "0")
    # auto: a real board's U-Boot variables go through its console; --uboot-env config
    # has nowhere to put them.
    assert console_changes(env, cfg, "auto") == {"bootdelay": "0"}
    assert console_changes(env, cfg, "config") is None
    with pytest.raises(Untryable, match="--uboot-env console sets them at the U-Boot prompt"):
        overrides(env, cfg)
    none = Knob(names.KNOB_NONE, "", why="build it as a module")
    with pytest.raises(Untryable, match="build it as a module"):
        overrides(none, cfg)


def test_on_the_simulator_an_argument_of_the_profile_is_removed_through_bootargs(
    tmp_path: Path,
) -> None:
    cfg = load_config(make_config(tmp_path))
    rm = _arg(names.KNOB_REMOVE, "rootdelay")
    line = "console=ttySC0,115200 rootdelay=1 initcall_debug"
    assert overrides(rm, cfg, line) == [
        'sim.uboot_env.bootargs="console=ttySC0,115200 initcall_debug"'
    ]
    with pytest.raises(Untryable, match="not on the boot's command line"):
        overrides(rm, cfg, "console=ttySC0,115200")
    # What the rig adds itself is dropped there, and not put into bootargs again.
    mine = load_config(make_config(tmp_path), overrides=['sim.kernel_args="lpj=5 rootdelay=2"'])
    assert overrides(rm, mine, line + " lpj=5 rootdelay=2") == ['sim.kernel_args="lpj=5"']
    assert overrides(_arg(names.KNOB_SET, "quiet"), cfg) == ['sim.kernel_args="quiet"']
