"""One InfluxDB point per soak (measurement `soak`), next to the per-boot points.

Its time is the soak's start, so the point written at the end of each session (and
after a resume) overwrites the previous one instead of adding another. Like boots, it
is spooled when the server is away and sent with the next successful write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig.sinks.influx.client import Client, InfluxError
from rig.sinks.influx.lineproto import FieldValue, Point, encode_all
from rig.sinks.influx.points import PRECISION_NS, utc_to_ns
from rig.sinks.influx.settings import InfluxSettings
from rig.sinks.influx.spool import Spool, spool_dir

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


def write_soak_point(summary: dict[str, Any], settings: InfluxSettings, results_dir: Path) -> str:
    """ "written", or "spooled" (with the reason) when the server did not take it."""
    lines = soak_lines(summary, settings.precision)
    try:
        with Client(settings) as client:
            client.write(lines)
        return "written"
    except InfluxError as e:
        meta = {"precision": settings.precision, "reason": str(e), "kind": e.kind}
        Spool(spool_dir(results_dir)).put(
            utc_to_ns(summary["started_utc"]), summary["soak_id"], lines, meta
        )
        return f"spooled: {e}"
