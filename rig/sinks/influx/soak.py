"""One InfluxDB point per soak (measurement `soak`), at the soak's start time, so each
session's end overwrites it; spooled like a boot's when the server is away."""

from __future__ import annotations

from pathlib import Path

from rig.config.influx import InfluxSettings
from rig.model.summary import SoakSummary
from rig.sinks.influx.deliver import Delivery, attempt, write_or_spool
from rig.sinks.influx.lineproto import FieldValue, Point, encode_all
from rig.sinks.influx.points import PRECISION_NS, utc_to_ns

SOAK = "soak"


def soak_lines(summary: SoakSummary, precision: str = "ns") -> list[str]:
    t = utc_to_ns(summary.started_utc) // PRECISION_NS[precision]
    tags = {
        "rig": summary.rig or "",
        "board": summary.board or "",
        "variant": summary.variant or "",
        "soak_id": summary.soak_id,
    }
    fields: dict[str, FieldValue] = {
        "cycles_count": summary.cycles.run,
        "failures_count": summary.failures,
        "failure_rate": float(summary.failure_rate),
        "status": summary.status,
    }
    for outcome, n in summary.outcomes.items():
        fields[f"{outcome}_count"] = int(n)
    for key in ("p50", "p95", "p99", "max", "stddev"):
        if isinstance(v := getattr(summary.power_to_ui, key), float):
            fields[f"power_to_ui_{key}_s"] = v
    for s in summary.stages:
        for key in ("p50", "p95"):
            if isinstance(v := getattr(s, key), float):
                fields[f"{s.name}_{key}_s"] = v
    return encode_all([Point(SOAK, tags, fields, t)])


def deliver_soak_point(
    summary: SoakSummary, settings: InfluxSettings | None, results_dir: Path
) -> Delivery:
    """Written, spooled (the server did not take it) or failed (why), as for a boot."""

    def send(s: InfluxSettings) -> Delivery:
        lines = soak_lines(summary, s.precision)
        t_ns, soak_id = utc_to_ns(summary.started_utc), summary.soak_id
        # No drain: the session's end drained the spool just before, and a drain after
        # this write could send an older spooled copy of this point over it.
        return write_or_spool(lines, t_ns, soak_id, s, results_dir, drain=False)

    return attempt(summary.soak_id, settings, send)
