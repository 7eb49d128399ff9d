"""A BootReport -> InfluxDB points (pure), following DESIGN's schema.

Every point of a boot carries the boot's power-on time (`started_utc`, ns), so writing a
report twice overwrites it instead of duplicating it. That only holds if the series key
(measurement + tag set) of every point in one report is unique: stages are told apart by
`stage`, initcalls by `initcall` (+ `module`), advisories by `rule`; repeats get `seq`.
Null fields are skipped (a stage never reached); the encoder drops points left empty.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from rig.errors import ArtifactError
from rig.outcomes import BootOutcome
from rig.sinks.influx.lineproto import FieldValue, Point, encode_all

BOOT = "boot"
STAGE = "stage"
INITCALL = "initcall"
ADVISORY = "advisory"

_UTC = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$")


class ReportError(ArtifactError):
    """A report that cannot become points (no usable start time)."""


def utc_to_ns(text: object) -> int:
    """ISO 8601 UTC (`2024-05-01T12:00:00.123456Z`) -> ns since the epoch, exactly."""
    m = _UTC.match(text) if isinstance(text, str) else None
    if not m:
        raise ReportError(f"started_utc: expected an ISO 8601 UTC time, found {text!r}")
    base, frac, zone = m.groups()
    zone = "+00:00" if zone == "Z" else zone
    try:
        seconds = int(datetime.fromisoformat(base + zone).timestamp())
    except ValueError as e:
        raise ReportError(f"started_utc: {e}") from None
    return seconds * 1_000_000_000 + int((frac or "0").ljust(9, "0"))


def _fields(**values: Any) -> dict[str, FieldValue]:
    return {k: v for k, v in values.items() if v is not None}


def common_tags(report: dict[str, Any]) -> dict[str, str]:
    tags = {k: report.get(k) for k in ("rig", "board", "variant", "outcome")}
    if tags["outcome"] is not None:  # a tag dashboards and queries match on: the contract's
        try:
            BootOutcome.parse(str(tags["outcome"]))
        except ValueError as e:
            raise ReportError(f"outcome: {e}") from None
    return {k: str(v) for k, v in tags.items() if v not in (None, "")}


def boot_fields(report: dict[str, Any]) -> dict[str, FieldValue]:
    stages = report.get("stages") or []
    advisories = report.get("advisories") or []
    # A supply's readings (report["power"]) add the boot's energy; a failed reading
    # section has an error and no totals.
    power = report.get("power") or {}
    return _fields(
        power_to_ui_s=report.get("power_to_ui_s"),
        power_to_ui_uncertainty_s=report.get("power_to_ui_uncertainty_s"),
        run_id=report.get("run_id"),
        time_reference=(report.get("time_base") or {}).get("reference"),
        stages_reached_count=sum(1 for s in stages if s.get("duration_s") is not None),
        initcall_count=len(report.get("initcalls") or []),
        advisory_count=len(advisories),
        advisory_gain_s=float(sum(a.get("gain_s") or 0.0 for a in advisories)),
        stages_energy_j=power.get("stages_energy_j"),
        stages_energy_uncertainty_j=power.get("stages_energy_uncertainty_j"),
    )


def stage_point(s: dict[str, Any]) -> tuple[dict[str, str], dict[str, FieldValue]]:
    return {"stage": s["name"]}, _fields(
        start_s=s.get("start_s"),
        end_s=s.get("end_s"),
        duration_s=s.get("duration_s"),
        uncertainty_s=s.get("uncertainty_s"),
        source=s.get("source"),
        energy_j=s.get("energy_j"),
        energy_uncertainty_j=s.get("energy_uncertainty_j"),
        mean_current_a=s.get("mean_current_a"),
        peak_current_a=s.get("peak_current_a"),
    )


def initcall_point(c: dict[str, Any]) -> tuple[dict[str, str], dict[str, FieldValue]]:
    # Newer kernels print __initstub__kmod_* names with build counters; the analysis
    # resolves them to the function, which stays the same from build to build.
    tags = {"initcall": c.get("function") or c["name"]}
    if c.get("module"):
        tags["module"] = c["module"]
    ret = c.get("return")
    return tags, _fields(
        start_s=c.get("start_s"),
        duration_s=c.get("duration_s"),
        return_code=int(ret) if ret is not None else None,
    )


def advisory_point(a: dict[str, Any]) -> tuple[dict[str, str], dict[str, FieldValue]]:
    return {"rule": a["rule"]}, _fields(
        gain_s=a.get("gain_s"),
        title=a.get("title"),
        evidence_count=len(a.get("evidence") or []),
    )


def _as_float(fields: dict[str, FieldValue], keys: tuple[str, ...]) -> None:
    # One field keeps one type per shard: a JSON `1` must not arrive as the integer 1i.
    for k in keys:
        v = fields.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            fields[k] = float(v)


_FLOAT_FIELDS = (
    "power_to_ui_s",
    "power_to_ui_uncertainty_s",
    "start_s",
    "end_s",
    "duration_s",
    "uncertainty_s",
    "gain_s",
    "energy_j",
    "energy_uncertainty_j",
    "mean_current_a",
    "peak_current_a",
    "stages_energy_j",
    "stages_energy_uncertainty_j",
)


PRECISION_NS = {"ns": 1, "u": 1_000}


def point_time_ns(report: dict[str, Any]) -> int:
    """The boot's power-on time (DESIGN: point time = power-on time); reports from before
    `power_on_utc` existed fall back to the run's start."""
    return utc_to_ns(report.get("power_on_utc") or report.get("started_utc"))


def report_points(report: dict[str, Any], precision: str = "ns") -> list[Point]:
    """Points stamped in `precision` units (the `precision` of the write that sends them)."""
    t = point_time_ns(report) // PRECISION_NS[precision]
    common = common_tags(report)
    parts: list[tuple[str, dict[str, str], dict[str, FieldValue]]]
    parts = [(BOOT, {}, boot_fields(report))]
    parts += [(STAGE, *stage_point(s)) for s in report.get("stages") or []]
    parts += [(INITCALL, *initcall_point(c)) for c in report.get("initcalls") or []]
    parts += [(ADVISORY, *advisory_point(a)) for a in report.get("advisories") or []]
    seen: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
    points: list[Point] = []
    for measurement, own, fields in parts:
        tags = {**common, **own}
        key = (measurement, tuple(sorted(tags.items())))
        n = seen[key] = seen.get(key, 0) + 1
        if n > 1:  # the same initcall twice in one boot must not overwrite the first
            tags["seq"] = str(n)
        _as_float(fields, _FLOAT_FIELDS)
        points.append(Point(measurement, tags, fields, t))
    return points


def report_lines(report: dict[str, Any], precision: str = "ns") -> list[str]:
    return encode_all(report_points(report, precision))
