"""Report -> line protocol (pure): escaping, nulls, unique series keys, point time."""

from __future__ import annotations

import copy
import re

import pytest

from rig.errors import ArtifactError
from rig.model import Report
from rig.sinks.influx.lineproto import Point, encode, escape_key, field_value
from rig.sinks.influx.points import report_lines, report_points, utc_to_ns
from tests.sample_report import sample_report


def test_utc_to_ns_is_exact() -> None:
    assert utc_to_ns("1970-01-01T00:00:00Z") == 0
    assert utc_to_ns("2024-05-01T06:00:00.000001Z") == 1714543200_000001000
    assert utc_to_ns("2024-05-01T08:00:00.123456789+02:00") == 1714543200_123456789
    for bad in (None, "", "yesterday", "2024-05-01 06:00:00"):
        with pytest.raises(ArtifactError):
            utc_to_ns(bad)


def test_escaping() -> None:
    assert escape_key("a b,c=d") == r"a\ b\,c\=d"
    assert escape_key("new\nline") == r"new\ line"
    assert escape_key("back\\slash") == "back/slash"
    assert field_value('say "hi" \\') == r'"say \"hi\" \\"'
    assert field_value(3) == "3i" and field_value(True) == "true"
    assert field_value(1e-05) == "1e-05"
    assert field_value(float("nan")) is None
    p = Point("m x", {"t": "v", "empty": ""}, {"f": 1.5}, 7)
    assert encode(p) == r"m\ x,t=v f=1.5 7"
    assert encode(Point("m", {}, {"f": float("inf")}, 7)) is None


def test_full_report_points() -> None:
    report = sample_report(3)
    points = report_points(report)
    by_m: dict[str, int] = {}
    for p in points:
        by_m[p.measurement] = by_m.get(p.measurement, 0) + 1
    assert by_m == {"boot": 1, "stage": 5, "initcall": 500, "advisory": 2}
    t = utc_to_ns(report.started_utc)
    assert {p.time_ns for p in points} == {t}
    keys = [(p.measurement, tuple(sorted(p.tags.items()))) for p in points]
    assert len(keys) == len(set(keys))
    for p in points:
        assert {"rig", "board", "variant", "outcome"} <= set(p.tags)
    stage = next(p for p in points if p.measurement == "stage")
    assert stage.tags["stage"] == "bootloader" and "duration_s" in stage.fields
    call = next(p for p in points if p.measurement == "initcall")
    assert call.tags["initcall"] == "init_fn_000" and call.tags["module"] == "mod0"
    assert isinstance(call.fields["return_code"], int)
    assert report_lines(report, "u")[0].endswith(f" {t // 1000}")


def test_nulls_skipped_and_repeats_kept_apart() -> None:
    report = sample_report(0, initcalls=3).to_json()
    report["outcome"] = "hang_in_application"
    report["power_to_ui_s"] = None
    last = report["stages"][-1]
    last.update(end_s=None, duration_s=None, uncertainty_s=None, source=None)
    never = dict(last, name="never", start_s=None)
    report["stages"].append(never)
    report["initcalls"].append(copy.deepcopy(report["initcalls"][0]))
    report["initcalls"][1]["duration_s"] = 1  # a JSON integer: still a float field
    lines = report_lines(Report.from_json(report))
    assert not any("stage=never" in line for line in lines)
    app = next(line for line in lines if "stage=application" in line)
    assert "duration_s" not in app and "start_s=" in app
    boot = next(line for line in lines if line.startswith("boot,"))
    assert "power_to_ui_s=" not in boot and "outcome=hang_in_application" in boot
    repeats = [line for line in lines if "initcall=init_fn_000" in line]
    assert len(repeats) == 2 and sum("seq=2" in line for line in repeats) == 1
    assert "duration_s=1.0" in next(line for line in lines if "init_fn_001" in line)


def test_missing_start_time_is_refused() -> None:
    report = sample_report(0, initcalls=0)
    report.started_utc = None
    with pytest.raises(ArtifactError):
        report_lines(report)


def test_quantities_written_as_json_integers_stay_floats() -> None:
    # A cold-boot check's off time of exactly 2 s, or a rail at 0 V, written by hand as
    # JSON integers: one field keeps one type per shard, so they are floats like the rest.
    report = sample_report(0, initcalls=0).to_json()
    report["cold_boot"] = {
        "off_time_s": 2, "off_time_uncertainty_s": None, "off_time_source": "relay",
        "off_time_bound": None, "rise_time_s": None, "rise_time_source": None,
        "rail_min_v": 0, "back_powered": None, "true_cold_boot": True,
    }  # fmt: skip
    boot = next(line for line in report_lines(Report.from_json(report)) if line.startswith("boot,"))
    assert "off_time_s=2.0" in boot and "rail_min_v=0.0" in boot
    assert re.search(r"stages_reached_count=\d+i", boot)  # counts stay integers
