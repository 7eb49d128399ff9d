"""One InfluxDB point per soak (measurement `soak`), next to the per-boot points.

Its time is the soak's start, so the point written at the end of each session (and
after a resume) overwrites the previous one instead of adding another. Like boots, it
is spooled when the server is away and sent with the next successful write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig.sinks.influx.deliver import Delivery, attempt, write_or_spool
from rig.sinks.influx.lineproto import FieldValue, Point, encode_all
from rig.sinks.influx.points import PRECISION_NS, utc_to_ns
from rig.sinks.influx.settings import InfluxSettings

SOAK = "soak"


def soak_lines(summary: dict[str, Any], precision: str = "ns") -> list[str]:
    t = utc_to_ns(summary["started_utc"]) // PRECISION_NS[precision]
    tags = {k: str(summary.get(k) or "") for k in ("rig", "board", "variant", "soak_id")}
    fields: dict[str, FieldValue] = {
        "cycles_count": int(summary["cycles"]["run"]),
        "failures_count": int(summary["failures"]),
        "failure_rate": float(summary["failure_rate"]),
        "status": str(summary["status"]),
    }
    for outcome, n in summary["outcomes"].items():
        fields[f"{outcome}_count"] = int(n)
    for key in ("p50", "p95", "p99", "max", "stddev"):
        if isinstance(summary["power_to_ui"].get(key), float):
            fields[f"power_to_ui_{key}_s"] = summary["power_to_ui"][key]
    for s in summary["stages"]:
        for key in ("p50", "p95"):
            if isinstance(s.get(key), float):
                fields[f"{s['name']}_{key}_s"] = s[key]
    return encode_all([Point(SOAK, tags, fields, t)])


def deliver_soak_point(
    summary: dict[str, Any], settings: InfluxSettings | None, results_dir: Path
) -> Delivery:
    """Written, spooled (the server did not take it) or failed (why), as for a boot."""

    def send(s: InfluxSettings) -> Delivery:
        lines = soak_lines(summary, s.precision)
        t_ns, soak_id = utc_to_ns(summary["started_utc"]), summary["soak_id"]
        # No drain: the session's end drained the spool just before, and a drain after
        # this write could send an older spooled copy of this point over it.
        return write_or_spool(lines, t_ns, soak_id, s, results_dir, drain=False)

    return attempt(summary.get("soak_id"), settings, send)
