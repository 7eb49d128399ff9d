"""Analyse an artifact folder: read the artifacts, decode the capture, build and write
the report. This is all `rig analyze DIR` does, and what `rig run` does after capture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig.analysis.report import build_report
from rig.artifacts import rundir
from rig.artifacts.decode import scan_markers
from rig.config import stages_from_snapshot
from rig.sinks.html.write import write_html


def _run_or_bare(folder: Path) -> dict[str, Any]:
    if (folder / rundir.RUN).exists() or not (folder / rundir.CAPTURE).exists():
        return rundir.read_run(folder)
    # A bare capture with the DESIGN channel names needs no run.json and no config.
    return {"run_id": folder.name, "board": "unknown", "power_on_ns": 0, "started_utc": None}


def analyze_folder(folder: Path, write: bool = True) -> dict[str, Any]:
    folder = Path(folder)
    if not folder.is_dir():
        raise rundir.ArtifactError(f"{folder}: not an artifact folder")
    run = _run_or_bare(folder)
    config = run.get("config") or {}
    analyzer = config.get("analyzer", {})
    baud = int(config.get("console", {}).get("baud", 115200))
    specs = stages_from_snapshot(config, folder / rundir.RUN)
    chunks = rundir.read_console(folder)

    artifacts = {"run": rundir.RUN}
    if (folder / rundir.CONSOLE_JSONL).exists():
        artifacts["console"] = rundir.CONSOLE_JSONL
    if (folder / rundir.CONSOLE_LOG).exists():
        artifacts["console_log"] = rundir.CONSOLE_LOG
    scan = None
    capture = folder / rundir.CAPTURE
    if capture.exists():
        artifacts["capture"] = rundir.CAPTURE
        scan = scan_markers(capture, float(analyzer.get("debounce_us", 1000.0)))
    if (folder / rundir.TRUTH).exists():
        artifacts["truth"] = rundir.TRUTH
    artifacts["report"] = rundir.REPORT
    if write:
        artifacts["html"] = rundir.REPORT_HTML

    report = build_report(run, chunks, scan, specs, baud, artifacts, config.get("analysis"))
    if write:
        rundir.write_json(folder / rundir.REPORT, report)
        write_html(folder)
    return report
