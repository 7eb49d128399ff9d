"""The report's files in its artifact folder: report.json (the contract) and, for
people, report.html. `rig run`, `rig analyze`, the soak and Robot write through here.

report.html links the one shared plotly.js beside the run folders (`plotlyjs.SHARED`,
docs/disk.md): a few tens of kB per boot instead of 2 MB."""

from __future__ import annotations

from pathlib import Path

from rig.artifacts import rundir
from rig.model import Report
from rig.sinks.html.plotlyjs import SHARED
from rig.sinks.html.write import write_html


def save_report(folder: Path, report: Report, html: bool = True) -> None:
    """report.json, then report.html drawn from the same report (listed among the
    artifacts): a soak writes both every cycle, so the file is not read back."""
    if html:
        report.artifacts["html"] = rundir.REPORT_HTML
    rundir.write_report(folder / rundir.REPORT, report)
    if html:
        write_html(folder, SHARED, report=report)
