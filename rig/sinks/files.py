"""The report's files in its artifact folder: report.json (the contract) and, for
people, report.html, linking the one shared plotly.js beside the run folders."""

from __future__ import annotations

from pathlib import Path

from rig.artifacts import rundir
from rig.errors import ArtifactError
from rig.model import Report
from rig.sinks.html.plotlyjs import SHARED
from rig.sinks.html.write import write_html


def save_report(folder: Path, report: Report, html: bool = True) -> None:
    """report.json, then report.html drawn from the same report, not read back. What
    `rig try` verified on the report this one replaces stays (a measurement, not a
    reading of these artifacts): on the advisory with the same rule and knob."""
    carry_verified(folder / rundir.REPORT, report)
    if html:
        report.artifacts["html"] = rundir.REPORT_HTML
    rundir.write_report(folder / rundir.REPORT, report)
    if html:
        write_html(folder, SHARED, report=report)


def carry_verified(old_path: Path, report: Report) -> None:
    if not old_path.is_file():
        return
    try:
        old = rundir.read_report(old_path)
    except (ArtifactError, OSError):
        return  # a report that cannot be read has nothing to carry: it is replaced
    verified = {a.knob_key: a.verified for a in old.advisories if a.verified is not None}
    for a in report.advisories:
        if a.verified is None and a.knob_key in verified:
            a.verified = verified[a.knob_key]
