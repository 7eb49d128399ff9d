"""`rig try`'s run (docs/try.md): for each advisory with a knob, interleaved boots without
and with it (`rig cost`'s machinery: each variant a bench of its own), their power-to-UI
compared. Everything lands in `<results_dir>/try-<id>/`: a `cost-<id>/` folder of boots
per advisory, and try.json."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig.analysis.choices import OFF, ON
from rig.artifacts.rundir import REPORT_HTML
from rig.compare.stats import Settings, StageComparison, compare
from rig.config.load import RigConfig
from rig.cost.run import Variant, run_cost, variant_configs
from rig.cost.stats import schedule
from rig.instruments.drivers import load_config
from rig.instruments.setup import Bench, Instruments
from rig.instruments.uboot_console import JOURNAL, changed_env, restore_journal
from rig.model.codec import dump
from rig.model.knob import Verified
from rig.model.report import Advisory, Report
from rig.names import TOTAL
from rig.sinks.files import save_report
from rig.trial.knobs import console_changes, overrides
from rig.trial.stats import Gain, gain_json, judge

PREFIX = "try-"
RESULT = "try.json"
SCHEMA = "bootrig.try/1"
#: One folder per block of boots with the change set at the console, in the try folder:
#: its journal (uboot-env.json) and both console sessions (docs/uboot-env.md).
ENV_BLOCK = "uboot-env-"
#: The QEMU target's environment flash takes saveenv only attached writable (its private
#: copy per machine; docs/qemu.md).
QEMU_WRITABLE = "qemu.env_writable=true"


@dataclass
class Trial:
    """One advisory tried: its knob's overrides, the boots, the gain."""

    advisory: Advisory
    sets: list[str]
    cfgs: dict[str, RigConfig] = field(default_factory=dict)  # off: without, on: with
    console: dict[str, str] | None = None  # U-Boot variables set at the prompt instead
    env_blocks: list[str] = field(default_factory=list)  # the console path's block folders
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
            "uboot_console": (
                {"changes": self.console, "blocks": self.env_blocks}
                if self.console is not None
                else None
            ),
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
    uboot_env: str = "auto"  # how a U-Boot variable reaches the board (knobs.UBOOT_ENV_WAYS)


def variants(
    plan: Plan, base: RigConfig, advisory: Advisory, cmdline: str | None = None
) -> tuple[list[str], dict[str, RigConfig], dict[str, str] | None]:
    """The knob's overrides, both variants' configs (off = without, on = with) and the
    U-Boot variables to set at the prompt for the side with it (None: the config carries
    the knob); `cmdline` is the kernel command line the advised boot printed."""
    assert advisory.knob is not None
    console = console_changes(advisory.knob, base, plan.uboot_env)
    if console is not None:
        # One board, one config: the sides differ in the environment saved on it.
        common = (*plan.common, QEMU_WRITABLE) if base.qemu is not None else plan.common
        vs = {OFF: Variant(OFF, (), "off:"), ON: Variant(ON, (), "on:")}
        cfgs = variant_configs(plan.config, vs, common)
        return [], {OFF: cfgs[OFF], ON: cfgs[OFF]}, console
    sets = overrides(advisory.knob, base, cmdline)
    vs = {
        OFF: Variant(OFF, (), "off:"),
        ON: Variant(ON, tuple(sets), "on:" + ",".join(sets)),
    }
    return sets, variant_configs(plan.config, vs, plan.common), None


def console_side(
    trial: Trial, folder: Path
) -> Callable[[str, Bench], AbstractContextManager[object]]:
    """The side hook of a console-path trial: each block of boots with the knob runs with
    the variables saved on the board (a power cycle and saveenv to set them, another to
    restore them), one folder each; the boots without it need nothing."""
    changes = trial.console
    assert changes is not None

    @contextmanager
    def side(variant: str, bench: Bench) -> Iterator[object]:
        if variant != ON:
            yield None
            return
        where = folder / f"{ENV_BLOCK}{trial.advisory.rule}-{len(trial.env_blocks) + 1}"
        trial.env_blocks.append(where.name)
        with changed_env(bench.power, bench.console, where, changes, own_signals=False):
            yield None

    return side


def _state(journal: Path) -> str | None:
    try:
        return json.loads(journal.read_text(encoding="utf-8")).get("state")
    except (OSError, ValueError, AttributeError):
        return None  # restore_journal says what is wrong with it


def restore_leftovers(base: RigConfig, plan: Plan) -> list[str]:
    """Before the board is touched: put back what an earlier try, killed inside a block of
    the console path, left changed (its journals not `restored`); a note for each. Only
    where this try may take the console path: elsewhere there are no such journals."""
    by_config = base.sim is not None or base.qemu is not None
    if plan.uboot_env == "config" or (plan.uboot_env == "auto" and by_config):
        return []
    found = sorted(base.results_dir.glob(f"{PREFIX}*/{ENV_BLOCK}*/{JOURNAL}"))
    left = [j.parent for j in found if _state(j) != "restored"]
    if not left:
        return []
    cfg = base
    if base.qemu is not None:
        cfg = load_config(plan.config, overrides=[*plan.common, QEMU_WRITABLE])
    with Instruments(cfg) as bench:
        for folder in left:
            restore_journal(folder, bench.power, bench.console)
    return [f"restored the U-Boot environment {f} left changed" for f in left]


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
    side = console_side(trial, folder) if trial.console is not None else None
    run = run_cost(cfgs, order, plan.warmup, plan.engine, stop, progress, side)
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
