"""Turn a captured cycle into its journal record: analyze, deliver, summarise.

The outcome always comes from the artifacts (the report's evidence). Where the rig
itself failed (an instrument raised, the rig was killed mid-cycle, the analysis
crashed) the cycle is a `rig_error`, said so in run.json so that the report, and
everything downstream of it, says the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig.artifacts import rundir
from rig.artifacts.leftovers import recover_folder
from rig.artifacts.srzip import CaptureError
from rig.model import Report
from rig.outcomes import Outcome
from rig.pipeline import analyze_folder
from rig.sinks.files import save_report
from rig.sinks.influx.deliver import deliver_or_note
from rig.sinks.influx.settings import InfluxSettings

#: run.json timing keys copied into the journal (seconds).
_TIMING = ("wall_s", "off_hold_s", "boot_s", "overhead_s", "hold_work_s")


def rss_kb() -> int | None:
    """This process's resident set (Linux), to spot leaks over a long soak."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def mark_rig_error(folder: Path, detail: str) -> bool:
    """Note in run.json that the rig failed during this cycle; False without run.json."""
    try:
        run = rundir.read_run(folder)
    except rundir.ArtifactError:
        return False
    run.rig_error = Outcome.RIG_ERROR.value
    run.rig_error_detail = detail
    rundir.write_run(folder, run)
    return True


def finish(
    folder: Path,
    *,
    cycle: int,
    session: int,
    t_ns: int | None,
    influx: InfluxSettings | None,
    spool_root: Path,
    detail: str | None = None,
    recovered: bool = False,
) -> tuple[dict[str, Any], Report | None]:
    """The cycle's journal record and its report (None when none could be made)."""
    rec: dict[str, Any] = {
        "type": "cycle",
        "cycle": cycle,
        "run_id": folder.name,
        "session": session,
        "t_ns": t_ns,
    }
    report: Report | None = None
    try:  # a capture the cycle left raw (or, for a recovered cycle, a killed rig did)
        recover_folder(folder, deferred=not recovered)
    except (CaptureError, OSError) as e:
        detail = detail or f"capture not converted (raw file kept): {e}"
    if (folder / rundir.RUN).exists():
        try:
            report = analyze_folder(folder)
            save_report(folder, report)
        except Exception as e:  # a crash in analysis must not end a night's soak
            detail = f"analysis failed (artifacts kept): {type(e).__name__}: {e}"
            if mark_rig_error(folder, detail):
                try:
                    report = analyze_folder(folder)  # says rig_error, from run.json
                    save_report(folder, report)
                except Exception:
                    report = None
    elif detail is None:
        detail = "no run.json: the rig stopped before the board was powered"
    rec["outcome"] = report.outcome if report else Outcome.RIG_ERROR.value
    rec["power_to_ui_s"] = report.power_to_ui_s if report else None
    rec["stages"] = {s.name: s.duration_s for s in report.stages} if report else {}
    rec["influx"] = deliver_or_note(report, influx, spool_root).note if report else "none"
    try:
        timing = rundir.read_run(folder).timing
    except rundir.ArtifactError:
        timing = None
    rec.update({k: getattr(timing, k) if timing else None for k in _TIMING})
    if detail:
        rec["detail"] = detail
    if recovered:
        rec["recovered"] = True
    rec["rss_kb"] = rss_kb()
    rec["utc"] = rundir.utc_now()
    return rec, report
