"""A Report -> InfluxDB points (pure), docs/contract.md, "InfluxDB": every point at the
boot's power-on time, repeats in one boot told apart by `seq`, null fields skipped.
"""

from __future__ import annotations

import re
from datetime import datetime

from rig.errors import ArtifactError
from rig.model.report import Advisory, Initcall, Report, Stage
from rig.sinks.influx.lineproto import FieldValue, Point, encode_all, fields

BOOT = "boot"
STAGE = "stage"
INITCALL = "initcall"
ADVISORY = "advisory"

_UTC = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$")


def utc_to_ns(text: object) -> int:
    """ISO 8601 UTC (`2024-05-01T12:00:00.123456Z`) -> ns since the epoch, exactly."""
    m = _UTC.match(text) if isinstance(text, str) else None
    if not m:
        raise ArtifactError(f"started_utc: expected an ISO 8601 UTC time, found {text!r}")
    base, frac, zone = m.groups()
    zone = "+00:00" if zone == "Z" else zone
    try:
        seconds = int(datetime.fromisoformat(base + zone).timestamp())
    except ValueError as e:
        raise ArtifactError(f"started_utc: {e}") from None
    return seconds * 1_000_000_000 + int((frac or "0").ljust(9, "0"))


def common_tags(report: Report) -> dict[str, str]:
    # The outcome is a tag dashboards and queries match on: Report.from_json has checked
    # it is the contract's.
    tags = {"rig": report.rig, "board": report.board, "variant": report.variant}
    tags["place"] = report.place  # boards of one kind in a lab: told apart by their place
    tags["outcome"] = report.outcome
    return {k: str(v) for k, v in tags.items() if v not in (None, "")}


def boot_fields(report: Report) -> dict[str, FieldValue]:
    # A supply's readings (report.power) add the boot's energy; a failed reading
    # section has an error and no totals. `cold_boot` (false: flagged, not a true cold
    # boot; absent: the rig could not tell) lets dashboards leave warm boots out.
    power, cold = report.power, report.cold_boot
    return fields(
        power_to_ui_s=report.power_to_ui_s,
        power_to_ui_uncertainty_s=report.power_to_ui_uncertainty_s,
        run_id=report.run_id,
        time_reference=report.time_base.reference if report.time_base else None,
        stages_reached_count=sum(1 for s in report.stages if s.reached),
        initcall_count=len(report.initcalls),
        advisory_count=len(report.advisories),
        advisory_gain_s=float(sum(a.gain_s or 0.0 for a in report.advisories)),
        stages_energy_j=power.stages_energy_j if power else None,
        stages_energy_uncertainty_j=power.stages_energy_uncertainty_j if power else None,
        cold_boot=cold.true_cold_boot if cold else None,
        off_time_s=cold.off_time_s if cold else None,
        rail_min_v=cold.rail_min_v if cold else None,
    )


def stage_point(s: Stage) -> tuple[dict[str, str], dict[str, FieldValue]]:
    return {"stage": s.name}, fields(
        start_s=s.start_s,
        end_s=s.end_s,
        duration_s=s.duration_s,
        uncertainty_s=s.uncertainty_s,
        source=s.source,
        energy_j=s.energy_j,
        energy_uncertainty_j=s.energy_uncertainty_j,
        mean_current_a=s.mean_current_a,
        peak_current_a=s.peak_current_a,
    )


def initcall_point(c: Initcall) -> tuple[dict[str, str], dict[str, FieldValue]]:
    # Newer kernels print __initstub__kmod_* names with build counters; the analysis
    # resolves them to the function, which stays the same from build to build.
    tags = {"initcall": c.function or c.name}
    if c.module:
        tags["module"] = c.module
    return tags, fields(start_s=c.start_s, duration_s=c.duration_s, return_code=c.return_code)


def advisory_point(a: Advisory) -> tuple[dict[str, str], dict[str, FieldValue]]:
    # The knob is fields, not tags: a tag would move an advisory to another series when a
    # newer rig gives it a knob, so a re-pushed boot would count its gain twice.
    k, v = a.knob, a.verified
    return {"rule": a.rule}, fields(
        gain_s=a.gain_s,
        title=a.title,
        evidence_count=len(a.evidence),
        knob_kind=k.kind if k else None,
        knob_op=k.op if k else None,
        knob_name=k.name if k else None,
        knob_value=k.value if k else None,
        verified_gain_s=v.gain_s if v else None,
        verified_ci_low_s=v.ci_low_s if v else None,
        verified_ci_high_s=v.ci_high_s if v else None,
        verified_verdict=v.verdict if v else None,
    )


PRECISION_NS = {"ns": 1, "u": 1_000}


def point_time_ns(report: Report) -> int:
    """The boot's power-on time (older reports without `power_on_utc`: the run's start)."""
    return utc_to_ns(report.power_on_utc or report.started_utc)


def report_points(report: Report, precision: str = "ns") -> list[Point]:
    """Points stamped in `precision` units (the `precision` of the write that sends them)."""
    t = point_time_ns(report) // PRECISION_NS[precision]
    common = common_tags(report)
    parts: list[tuple[str, dict[str, str], dict[str, FieldValue]]]
    parts = [(BOOT, {}, boot_fields(report))]
    parts += [(STAGE, *stage_point(s)) for s in report.stages]
    parts += [(INITCALL, *initcall_point(c)) for c in report.initcalls]
    parts += [(ADVISORY, *advisory_point(a)) for a in report.advisories]
    seen: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
    points: list[Point] = []
    for measurement, own, values in parts:
        tags = {**common, **own}
        key = (measurement, tuple(sorted(tags.items())))
        n = seen[key] = seen.get(key, 0) + 1
        if n > 1:  # the same initcall twice in one boot must not overwrite the first
            tags["seq"] = str(n)
        points.append(Point(measurement, tags, values, t))
    return points


def report_lines(report: Report, precision: str = "ns") -> list[str]:
    return encode_all(report_points(report, precision))
