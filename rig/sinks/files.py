"""The report's files in its artifact folder: report.json (the contract) and, for
people, report.html, linking the one shared plotly.js beside the run folders."""

from __future__ import annotations

from pathlib import Path

from rig.artifacts import rundir
from rig.model import Report
from rig.sinks.html.plotlyjs import SHARED
from rig.sinks.html.write import write_html


def save_report(folder: Path, report: Report, html: bool = True) -> None:
    """report.json, then report.html drawn from the same report, not read back."""
    if html:
        report.artifacts["html"] = rundir.REPORT_HTML
    rundir.write_report(folder / rundir.REPORT, report)
    if html:
        write_html(folder, SHARED, report=report)
