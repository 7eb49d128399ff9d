"""`rig try`'s run (docs/try.md): for each advisory with a knob, interleaved boots without
and with it (`rig cost`'s machinery: each variant a bench of its own), their power-to-UI
compared. Everything lands in `<results_dir>/try-<id>/`: a `cost-<id>/` folder of boots
per advisory, and try.json."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig.analysis.choices import OFF, ON
from rig.artifacts.rundir import REPORT_HTML
from rig.compare.stats import Settings, StageComparison, compare
from rig.config.load import RigConfig
from rig.cost.run import Variant, run_cost, variant_configs
from rig.cost.stats import schedule
from rig.model.codec import dump
from rig.model.knob import Verified
from rig.model.report import Advisory, Report
from rig.names import TOTAL
from rig.sinks.files import save_report
from rig.trial.knobs import overrides
from rig.trial.stats import Gain, gain_json, judge

PREFIX = "try-"
RESULT = "try.json"
SCHEMA = "bootrig.try/1"


@dataclass
class Trial:
    """One advisory tried: its knob's overrides, the boots, the gain."""

    advisory: Advisory
    sets: list[str]
    cfgs: dict[str, RigConfig] = field(default_factory=dict)  # off: without, on: with
    folder: Path | None = None
    comparison: StageComparison | None = None
    gain: Gain | None = None
    interrupted: bool = False
    wall_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        a, k = self.advisory, self.advisory.knob
        return {
            "rule": a.rule,
            "title": a.title,
            "knob": dump(k) if k is not None else None,
            "sets": self.sets,
            "predicted_s": a.gain_s,
            "predicted_kind": a.gain_kind,
            "measured": gain_json(self.gain) if self.gain else None,
            "comparison": self.comparison.to_json() if self.comparison else None,
            "folder": str(self.folder) if self.folder else None,
            "wall_s": round(self.wall_s, 3),
            "interrupted": self.interrupted,
        }


@dataclass(frozen=True)
class Plan:
    """How each advisory is booted: pairs in `order` (seeded), warm-up boots a side."""

    config: Path
    common: tuple[str, ...]
    pairs: int
    order: str
    seed: int
    warmup: int
    engine: str


def variants(
    plan: Plan, base: RigConfig, advisory: Advisory, cmdline: str | None = None
) -> tuple[list[str], dict[str, RigConfig]]:
    """The knob's overrides and both variants' configs: off = without, on = with;
    `cmdline` is the kernel command line the advised boot printed."""
    assert advisory.knob is not None
    sets = overrides(advisory.knob, base, cmdline)
    vs = {
        OFF: Variant(OFF, (), "off:"),
        ON: Variant(ON, tuple(sets), "on:" + ",".join(sets)),
    }
    return sets, variant_configs(plan.config, vs, plan.common)


def try_one(
    plan: Plan,
    trial: Trial,
    folder: Path,
    alpha: float,
    stop: threading.Event,
    progress: Callable[[str], None] = lambda _: None,
) -> Trial:
    """Boot `trial`'s advisory without and with its knob into `folder`; `alpha` is this
    advisory's share of the run's error rate."""
    cfgs = {v: dataclasses.replace(c, results_dir=folder) for v, c in trial.cfgs.items()}
    order = schedule(plan.pairs, plan.order, plan.seed)
    run = run_cost(cfgs, order, plan.warmup, plan.engine, stop, progress)
    trial.folder, trial.interrupted, trial.wall_s = run.folder, run.interrupted, run.wall_s
    without = run.sides[OFF].samples().get(TOTAL, [])
    with_knob = run.sides[ON].samples().get(TOTAL, [])
    trial.comparison = compare(TOTAL, without, with_knob, Settings(alpha=alpha))
    a = trial.advisory
    trial.gain = judge(
        trial.comparison, a.gain_s, a.gain_kind,
        run.outcomes(OFF), run.outcomes(ON),
    )  # fmt: skip
    return trial


def record(report_path: Path, report: Report, trials: Sequence[Trial], pairs: int) -> bool:
    """Each finished trial's gain onto its advisory in the source report (report.json
    rewritten, report.html too where there is one): `verified` beside the estimate.
    False when no trial finished."""
    done = [t for t in trials if t.gain is not None and not t.interrupted]
    for t in done:
        assert t.gain is not None
        m = gain_json(t.gain)  # to the nanosecond, as try.json states it
        t.advisory.verified = Verified(
            m["gain_s"],
            m["ci_low_s"],
            m["ci_high_s"],
            t.gain.verdict,
            t.gain.prediction,
            t.gain.outcome_kept,
            pairs,
            str(t.folder) if t.folder else None,
        )  # type: ignore[arg-type]
    if done:
        folder = report_path.parent
        save_report(folder, report, html=(folder / REPORT_HTML).is_file())
    return bool(done)
