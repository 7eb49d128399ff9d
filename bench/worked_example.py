"""The worked example's `rig try` steps (docs/worked-example.md, "One advice at a time"):
the simulated Ecovec baseline taken through the talk's steps one advice at a time.

Each step is one `rig try --advice RULE` on the board as the steps before left it: its
config is the previous step's plus the knob of every advice accepted so far (`--set`,
the `sets` rig try reports), its advice the report of the previous step's first boot
with the knob (a board that no longer has the setting no longer gets the advice). A
step's knob is kept, as the talk kept it, unless the boots showed it harms: a verdict
`broke` or `slower`, or an outcome not kept (a `no_gain` is a gain these boots are too
few to show, as the Ecovec's 50 ms ones against its 0.3 s spread at 4 pairs). Beside
each measured gain: the talk's figure (Murray, ELC-E 2010: the change of the stage the
knob acts on, as docs/worked-example.md's table gives it; the talk gives no figure per
knob) and the knob's truth on the board as it stood (simboard.knob_truth). Power-to-UI
after a step is the median of its boots with the knob, beside the profile's nominal.

    python bench/worked_example.py [--keep DIR] [--pairs 4] [--seed 0] [--steps RULE ...]

Its last line is the harness line: the steps, the wall time, and `target_met` when every
step was tried and its truth lies inside its interval (`ratio`: truths inside / steps).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import Stopwatch, result, rig_json  # noqa: E402
from rig.model.knob import Knob  # noqa: E402
from simboard.knob_truth import POWER_TO_UI, durations, knob_truth, with_knob  # noqa: E402
from simboard.profile import Profile  # noqa: E402
from simboard.timeline import load  # noqa: E402
from tests.e2e import make_config  # noqa: E402

BASELINE = REPO / "config" / "boards" / "ecovec-baseline.toml"
# The boots' times are whole microseconds, a truth is not: an interval of one value holds it
# to this much.
RESOLUTION_S = 1e-6
# The talk's steps a knob makes, in its order, with the stage each acts on.
STEPS = ("uboot_bootdelay", "image_verify", "uboot_console", "calibrate_delay", "console_output")
STAGE = {
    "uboot_bootdelay": "bootloader",
    "image_verify": "bootloader",
    "uboot_console": "bootloader",
    "calibrate_delay": "kernel",
    "console_output": "kernel",
}
HARM = ("broke", "slower")  # a step whose knob is not kept
# Murray's before/after per stage (docs/worked-example.md, "The table"), seconds.
TALK = {"bootloader": (2.58, 0.28), "kernel": (1.30, 0.11), POWER_TO_UI: (19.44, 0.77)}


@dataclass
class Step:
    index: int
    rule: str
    knob: str  # as a person writes it, or why the step was not tried
    gain_s: float | None = None
    ci_s: tuple[float | None, float | None] = (None, None)
    verdict: str = "not advised"
    truth_s: float | None = None
    after_s: float | None = None  # median power-to-UI of the boots with the knob
    nominal_after_s: float | None = None  # the profile's, with every knob accepted so far
    accepted: bool = False  # the knob stays for the steps after

    @property
    def inside(self) -> bool:
        lo, hi = self.ci_s
        if lo is None or hi is None or self.truth_s is None:
            return False
        return lo - RESOLUTION_S <= self.truth_s <= hi + RESOLUTION_S


def setting(knob: dict[str, Any]) -> str:
    """The knob as rig try's table writes it: `lpj=1495040`, `without rootdelay`."""
    if knob["op"] == "remove":
        return f"without {knob['name']}"
    return knob["name"] if knob.get("value") is None else f"{knob['name']}={knob['value']}"


def merged(sets: dict[str, str], new: list[str]) -> dict[str, str]:
    """`sets` (key -> KEY=VALUE) with rig try's `sets` of an accepted step: a later one of
    the same key wins (rig try's kernel_args already carry the earlier arguments)."""
    out = dict(sets)
    for s in new:
        out[s.split("=", 1)[0]] = s
    return out


def step_from_trial(index: int, trial: dict[str, Any], profile: Profile) -> tuple[Step, Profile]:
    """One step's row from its try.json trial, and the board after it (the knob turned
    when accepted)."""
    m = trial["measured"] or {}
    knob = Knob(**trial["knob"])
    step = Step(index, trial["rule"], setting(trial["knob"]))
    step.gain_s, step.ci_s = m.get("gain_s"), (m.get("ci_low_s"), m.get("ci_high_s"))
    step.verdict = m.get("verdict") or "-"
    step.truth_s = knob_truth(profile, knob)
    step.after_s = (trial["comparison"] or {}).get("median_after_s")
    step.accepted = step.verdict not in HARM and bool(m.get("outcome_kept"))
    after = with_knob(profile, knob) if step.accepted else profile
    step.nominal_after_s = durations(after)[POWER_TO_UI]
    return step, after


def run_steps(
    cfg: Path, board: Path, rules: tuple[str, ...], pairs: int, seed: int
) -> tuple[list[Step], Profile]:
    """`rig try` step by step; the rows and the board as the accepted steps left it."""
    profile, sets, source = load(board), {}, None  # the first try boots once for advice
    steps: list[Step] = []
    for i, rule in enumerate(rules, 1):
        args = [*([source] if source else []), "--config", str(cfg), "--advice", rule]
        args += ["--pairs", str(pairs), "--warmup", "0", "--seed", str(seed)]
        args += [f"--set={s}" for s in sets.values()]
        doc = rig_json("try", *args, "--json", timeout=7200, codes=(0, 2))
        if not doc.get("trials"):
            why = doc.get("error", "nothing tried")
            steps.append(Step(i, rule, why.rsplit(": ", 1)[-1][:60]))
            continue
        step, profile = step_from_trial(i, doc["trials"][0], profile)
        steps.append(step)
        if step.accepted:
            sets = merged(sets, doc["trials"][0]["sets"])
            source = str(Path(doc["trials"][0]["folder"]) / "on-0001")
    return steps, profile


def _ms(s: float | None, sign: bool = False) -> str:
    return "-" if s is None else f"{s * 1e3:{'+' if sign else ''}.1f}"


def table(steps: list[Step], before_s: float) -> str:
    """The steps as a Markdown table (ms), the board's nominal power-to-UI first."""
    lines = [
        "| step | advice | knob | talk (stage) | gain | interval | verdict | kept | truth "
        "| power-to-UI after | nominal after |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| 0 | baseline | - | - | - | - | - | - | - | - | {_ms(before_s)} |",
    ]
    for s in steps:
        stage = STAGE.get(s.rule)
        talk = f"{stage} {_ms(TALK[stage][0] - TALK[stage][1])}" if stage in TALK else "-"
        lo, hi = s.ci_s
        ci = "-" if lo is None or hi is None else f"{_ms(lo)} .. {_ms(hi)}"
        lines.append(
            f"| {s.index} | {s.rule} | {s.knob} | {talk} | {_ms(s.gain_s)} | {ci} | "
            f"{s.verdict} | {'yes' if s.accepted else 'no'} | {_ms(s.truth_s)} | "
            f"{_ms(s.after_s)} | {_ms(s.nominal_after_s)} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, help="Keep the boots here.")
    ap.add_argument("--board", type=Path, default=BASELINE)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", nargs="+", default=list(STEPS), metavar="RULE")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-worked-") as tmp:
        base = args.keep or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        cfg = make_config(base, board=str(args.board.resolve()))
        with Stopwatch() as sw:
            steps, _ = run_steps(cfg, args.board, tuple(args.steps), args.pairs, args.seed)
    print(table(steps, durations(load(args.board))[POWER_TO_UI]))
    n_in = sum(s.inside for s in steps)
    result(
        "worked_example",
        pairs=args.pairs,
        seed=args.seed,
        steps=[{**s.__dict__, "inside": s.inside} for s in steps],
        wall_s=round(sw.s, 1),
        reference={"truth": "inside each step's interval", "talk_power_to_ui_s": TALK[POWER_TO_UI]},
        ratio=round(n_in / len(steps), 3) if steps else None,
        target_met=bool(steps) and n_in == len(steps),
    )


if __name__ == "__main__":
    main()
