"""Turn a captured cycle into its journal record: analyze, deliver, summarise. The
outcome always comes from the artifacts; where the rig itself failed the cycle is a
`rig_error`, said so in run.json so that the report, and all after it, say the same.
"""

from __future__ import annotations

from pathlib import Path

from rig.artifacts import rundir
from rig.artifacts.leftovers import recover_folder
from rig.config.influx import InfluxSettings
from rig.errors import ArtifactError
from rig.measure.pipeline import analyze_folder
from rig.model import Report
from rig.model.run import RunState, RunTiming
from rig.model.soak import CycleRecord
from rig.outcomes import Outcome
from rig.sinks.files import save_report
from rig.sinks.influx.deliver import deliver_or_note


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
    except ArtifactError:
        return False
    run.rig_error = Outcome.RIG_ERROR.value
    run.rig_error_detail = detail
    if run.state is not None:  # a legacy run.json keeps its shape
        run.state = RunState.FAILED
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
) -> tuple[CycleRecord, Report | None]:
    """The cycle's journal record and its report (None when none could be made)."""
    report: Report | None = None
    try:  # a capture the cycle left raw (or, for a recovered cycle, a killed rig did)
        recover_folder(folder, deferred=not recovered)
    except (ArtifactError, OSError) as e:
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
    influx_note = deliver_or_note(report, influx, spool_root).note if report else "none"
    try:
        timing: RunTiming | None = rundir.read_run(folder).timing
    except ArtifactError:
        timing = None
    cold = report.cold_boot if report else None
    rec = CycleRecord(
        cycle=cycle,
        run_id=folder.name,
        session=session,
        t_ns=t_ns,
        outcome=report.outcome if report else Outcome.RIG_ERROR.value,
        power_to_ui_s=report.power_to_ui_s if report else None,
        stages={s.name: s.duration_s for s in report.stages} if report else {},
        influx=influx_note,
        wall_s=timing.wall_s if timing else None,
        off_hold_s=timing.off_hold_s if timing else None,
        boot_s=timing.boot_s if timing else None,
        overhead_s=timing.overhead_s if timing else None,
        hold_work_s=timing.hold_work_s if timing else None,
        detail=detail or None,
        cold_boot=cold.true_cold_boot if cold else None,
        not_cold=cold.reasons if cold and cold.true_cold_boot is False else None,
        recovered=True if recovered else None,
        rss_kb=rss_kb(),
        utc=rundir.utc_now(),
    )
    return rec, report
