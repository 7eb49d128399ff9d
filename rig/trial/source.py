"""The advice `rig try` tries: a run's report, a soak's newest boot that reached its UI,
or (no source given) one boot of the target taken first (docs/try.md, "Source")."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from rig import names
from rig.artifacts.rundir import REPORT, read_report
from rig.config.load import RigConfig
from rig.errors import InputError
from rig.instruments.setup import Instruments
from rig.measure.cycle import run_cycle
from rig.measure.pipeline import analyze_folder
from rig.model.report import Advisory, Report
from rig.outcomes import Outcome
from rig.sinks.files import save_report


@dataclass
class Advice:
    """Where the advice came from, what is tried, and what is not (with why)."""

    report_path: Path
    report: Report
    tried: list[Advisory] = field(default_factory=list)
    untried: list[tuple[str, str]] = field(default_factory=list)  # (rule, why)

    @property
    def cmdline(self) -> str | None:
        """The kernel command line the advised boot printed, if it did."""
        k = self.report.kernel
        return k.cmdline.text if k is not None and k.cmdline is not None else None


def read_source(source: Path) -> Path:
    """The report.json `source` names: the file, a run folder's, or a soak folder's
    newest boot with outcome ok."""
    if source.is_file():
        return source
    if not source.is_dir():
        raise InputError(f"{source}: no such run folder, soak folder or report.json")
    if (source / REPORT).is_file():
        return source / REPORT
    for p in sorted(source.glob(f"*/{REPORT}"), reverse=True):
        if read_report(p).outcome == Outcome.OK:
            return p
    raise InputError(f"{source}: no {REPORT} in it, nor a boot of it with outcome ok")


def boot_once(cfg: RigConfig, folder: Path, engine: str, stop: threading.Event) -> Path:
    """One measured boot of the target into `folder`, analyzed: the advice to try."""
    with Instruments(cfg) as bench:
        cycle = run_cycle(cfg, bench, run_id="source", abort=stop)
    report = analyze_folder(cycle.folder, engine=engine)
    save_report(cycle.folder, report, html=False)
    return cycle.folder / REPORT


def select(report_path: Path, rules: tuple[str, ...]) -> Advice:
    """The report's advisories with a knob, those of `rules` only when given."""
    report = read_report(report_path)
    have = [a.rule for a in report.advisories]
    unknown = [r for r in rules if r not in have]
    if unknown:
        listed = ", ".join(dict.fromkeys(have)) or "none"
        raise InputError(
            f"--advice {unknown[0]}: {report_path} has no such advisory (it has: {listed})"
        )
    out = Advice(report_path, report)
    for a in report.advisories:
        if rules and a.rule not in rules:
            continue
        if a.knob is None or a.knob.kind == names.KNOB_NONE:
            why = a.knob.why if a.knob is not None and a.knob.why else "no knob"
            out.untried.append((a.rule, why or "nothing the rig can set"))
        else:
            out.tried.append(a)
    return out
