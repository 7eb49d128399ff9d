"""Deliver to InfluxDB, or note why not: the one way `rig run`, the soak and Robot hand
points to the server. Written now; else spooled durably for a later replay; else failed
(the reason says why); or off (no `[influx]` table).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rig.artifacts.rundir import utc_now
from rig.config.influx import InfluxSettings
from rig.model import Report
from rig.sinks.influx.client import Client, InfluxError
from rig.sinks.influx.points import point_time_ns, report_lines
from rig.sinks.influx.replay import ReplayResult, replay
from rig.sinks.influx.spool import Spool, spool_dir

Status = Literal["written", "spooled", "failed", "off"]


@dataclass
class Delivery:
    status: Status
    run_id: str | None
    points: int
    reason: str | None = None  # spooled: the server's answer; failed: why not even spooled
    spool_file: str | None = None
    replay: ReplayResult | None = None

    @property
    def note(self) -> str:
        """The short form a soak journal and summary keep (docs/soak.md)."""
        return f"failed: {self.reason}" if self.status == "failed" else self.status

    def describe(self) -> str:
        """One line for a person (the `rig run` output, the Robot log)."""
        if self.status == "written":
            text = f"influx: {self.points} points written"
            if self.replay and self.replay.reports:
                text += f", {self.replay.reports} spooled boot(s) replayed"
            return text
        if self.status == "spooled":
            return f"influx: not written ({self.reason}); spooled to {self.spool_file}"
        if self.status == "failed":
            return f"influx: not written or spooled: {self.reason}"
        return "influx: off (no [influx] table)"


def write_or_spool(
    lines: list[str],
    time_ns: int,
    run_id: str | None,
    settings: InfluxSettings,
    results_dir: Path,
    *,
    drain: bool = True,
) -> Delivery:
    """Write the lines; if the server is down, slow or says no, spool them (fsynced).
    With `drain`, a successful write also replays the spool. OSError: not spooled either."""
    spool = Spool(spool_dir(results_dir))
    try:
        with Client(settings) as client:
            client.write(lines)
            drained = None
            if drain and spool.paths():
                try:
                    drained = replay(client, spool, settings.batch_points)
                except OSError as err:  # these lines are written; the spool waits for `replay`
                    drained = ReplayResult(error=f"spool: {err}")
        return Delivery("written", run_id, len(lines), replay=drained)
    except InfluxError as e:
        meta = {
            "precision": settings.precision,
            "reason": str(e),
            "kind": e.kind,
            "spooled_utc": utc_now(),
        }
        path = spool.put(time_ns, run_id, lines, meta)
        return Delivery("spooled", run_id, len(lines), str(e), str(path))


def deliver(report: Report, settings: InfluxSettings, results_dir: Path) -> Delivery:
    """Write one report, or spool it. Raises ArtifactError for a report that can never be
    written (no start time) and OSError when the spool cannot keep it."""
    lines = report_lines(report, settings.precision)
    return write_or_spool(lines, point_time_ns(report), report.run_id, settings, results_dir)


def attempt(
    run_id: str | None,
    settings: InfluxSettings | None,
    send: Callable[[InfluxSettings], Delivery],
) -> Delivery:
    """`send(settings)`, but never raising: off without settings, failed with the reason
    when the points cannot be made (ValueError, ArtifactError) or the spool is unwritable."""
    if settings is None:
        return Delivery("off", run_id, 0)
    try:
        return send(settings)
    except (ValueError, OSError) as e:  # a boot's delivery must not end a run or a soak
        return Delivery("failed", run_id, 0, reason=str(e))


def deliver_or_note(report: Report, settings: InfluxSettings | None, results_dir: Path) -> Delivery:
    """`deliver`, never raising: what `rig run`, the soak and Robot call for a report."""
    return attempt(report.run_id, settings, lambda s: deliver(report, s, results_dir))
