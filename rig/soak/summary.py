"""The soak summary (summary.json), computed from the journal alone.

Stage statistics are over the boots whose outcome is `ok`: a failed boot is not a
sample of the same process (a hang's earlier stages are fine, but mixing them in would
weight each stage by a different set of boots). Failure rates are over every cycle.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from rig.outcomes import Outcome
from rig.soak.recover import orphans
from rig.soak.stats import describe, failure_rates

SUMMARY_SCHEMA = "bootrig.soak-summary/1"
SUMMARY_JSON = "summary.json"
SUMMARY_HTML = "summary.html"


def cycle_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("type") == "cycle"]


def _influx(cycles: list[dict[str, Any]]) -> dict[str, int]:
    kinds = Counter(str(r.get("influx", "none")).split(":", 1)[0] for r in cycles)
    return dict(sorted(kinds.items()))


def _rss(cycles: list[dict[str, Any]]) -> dict[str, Any]:
    """Resident memory per session, first cycle to last (a leak shows as growth)."""
    by_session: dict[int, list[int]] = {}
    for r in cycles:
        if isinstance(r.get("rss_kb"), int):
            by_session.setdefault(int(r.get("session", 1)), []).append(r["rss_kb"])
    growth = [v[-1] - v[0] for v in by_session.values() if v]
    return {
        "max_kb": max((max(v) for v in by_session.values()), default=None),
        "growth_kb": max(growth, default=None),
    }


def status(records: list[dict[str, Any]]) -> str:
    """How the last session ended: completed, interrupted, aborted, or running (no end
    line yet: still running, or killed)."""
    last_end = next((r for r in reversed(records) if r.get("type") in ("end", "resume")), None)
    if last_end is None or last_end["type"] == "resume":
        return "running"
    return str(last_end.get("reason", "completed"))


def summarize(folder: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    header = records[0]
    cycles = cycle_records(records)
    ok = [r for r in cycles if r.get("outcome") == Outcome.OK]
    stage_names = list(header.get("stages") or [])
    for r in cycles:  # stages the config did not name (an older journal) still count
        stage_names += [n for n in r.get("stages", {}) if n not in stage_names]
    stages = [
        {
            "name": name,
            **describe([r["stages"][name] for r in ok if r["stages"].get(name) is not None]),
        }
        for name in stage_names
    ]
    overheads = [r["overhead_s"] for r in cycles if isinstance(r.get("overhead_s"), float)]
    rates = failure_rates(r.get("outcome", "") for r in cycles)
    ends = [r for r in records if r.get("type") == "end"]
    return {
        "schema": SUMMARY_SCHEMA,
        "soak_id": header.get("soak_id"),
        "rig": header.get("rig"),
        "board": header.get("board"),
        "variant": header.get("variant"),
        "config": header.get("config"),
        "started_utc": header.get("started_utc"),
        "updated_utc": records[-1].get("utc"),
        "status": status(records),
        "limits": {"cycles": header.get("cycles"), "duration_s": header.get("duration_s")},
        "sessions": 1 + sum(1 for r in records if r.get("type") == "resume"),
        "elapsed_s": max((r.get("elapsed_s") or 0.0 for r in cycles + ends), default=0.0),
        "cycles": {
            "run": len(cycles),
            "classified": sum(1 for r in cycles if r.get("outcome")),
            "recovered": sum(1 for r in cycles if r.get("recovered")),
            "interrupted": sum(1 for r in records if r.get("type") == "interrupted"),
            "unjournaled": len(orphans(folder, records)),
        },
        "outcomes": rates["counts"],
        "measured": rates["measured"],  # cycles whose outcome is the board's
        "not_measured": rates["not_measured"],  # interrupted, rig_error, invalid_artifacts
        "failures": rates["failures"],
        "failure_rate": rates["failure_rate"],
        "failure_rates": rates["rates"],
        "power_to_ui": describe([r["power_to_ui_s"] for r in ok if r.get("power_to_ui_s")]),
        "stages": stages,
        "overhead": describe(overheads),
        "influx": _influx(cycles),
        "rss": _rss(cycles),
        "failed_cycles": [
            {k: r.get(k) for k in ("cycle", "run_id", "outcome", "detail")}
            for r in cycles
            if r.get("outcome") != Outcome.OK
        ],
        "folder": str(folder),
    }
