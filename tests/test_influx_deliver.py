"""The one delivery (written / spooled / failed / off, same words everywhere) and the one
batch split on rejection, against a real private influxd."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rig.artifacts.rundir import write_json
from rig.config.influx import InfluxSettings
from rig.model.summary import CycleCounts, Distribution, Limits, Memory, SoakSummary
from rig.sinks.influx.batch import batches, write_split
from rig.sinks.influx.client import Client
from rig.sinks.influx.deliver import deliver_or_note
from rig.sinks.influx.points import utc_to_ns
from rig.sinks.influx.server import PrivateServer
from rig.sinks.influx.sink import push
from rig.sinks.influx.soak import deliver_soak_point
from rig.sinks.influx.spool import Spool, spool_dir
from tests.influx_env import influx_server, settings_for  # noqa: F401 - the fixture `server`
from tests.sample_report import sample_report, stored_run_ids

UNREACHABLE = "http://127.0.0.1:9"  # nothing listens on the discard port


def test_batches_by_points_and_precision() -> None:
    items = [(1, "ns"), (2, "ns"), (3, "ns"), (1, "s"), (1, "s")]
    got = list(batches(items, lambda i: i[0], 3, key=lambda i: i[1]))
    assert got == [[(1, "ns"), (2, "ns")], [(3, "ns")], [(1, "s"), (1, "s")]]
    assert list(batches([], lambda i: 1, 3)) == []


def test_rejected_batch_is_split_in_halves_and_the_good_part_lands(
    server: PrivateServer, request: pytest.FixtureRequest
) -> None:
    s = settings_for(server, request)
    with Client(s) as c:
        c.write(["m f=0.5 1000"])  # f is a float from now on, in this shard
        items = [f"m,i={i} f={i}.5 {1000 + i}".encode() for i in range(8)]
        items[5] = b'm,i=5 f="bad" 1005'  # a string: the server says 400
        sent: list[int] = []
        write = c.write

        def counting(lines: list[str] | bytes, precision: str | None = None) -> None:
            assert isinstance(lines, bytes)
            sent.append(len(lines.split(b"\n")))
            write(lines, precision)

        c.write = counting  # type: ignore[method-assign]
        out = list(write_split(c, items, lambda b: b, "ns"))
        c.write = write  # type: ignore[method-assign]
        written = [i for done, err in out if err is None for i in done]
        refused = [(i, err) for done, err in out if err is not None for i in done]
        assert written == items[:5] + items[6:]
        assert len(refused) == 1 and refused[0][0] == items[5]
        assert "field type conflict" in str(refused[0][1])
        assert sent == [8, 4, 4, 2, 1, 1, 2]  # halves, not one request per item
        res = c.query('SELECT count("f") FROM "m"', s.database)
        assert res[0]["series"][0]["values"][0][1] == 1 + 7  # the first point, the good ones


def test_push_writes_around_a_rejected_report(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    s = settings_for(server, request)
    reports = [sample_report(20 + i, initcalls=3).to_json() for i in range(3)]
    # Field types are per shard (a week): the good boots in other shards than the bad one.
    reports[0]["started_utc"] = "2030-05-01T12:00:00Z"
    reports[2]["started_utc"] = "2031-05-01T12:00:00Z"
    files = []
    for r in reports:
        (tmp_path / r["run_id"]).mkdir()
        write_json(tmp_path / r["run_id"] / "report.json", r)
        files.append(tmp_path / r["run_id"] / "report.json")
    with Client(s) as c:  # the middle boot's stage conflicts with what is stored
        c.write([f'stage,stage=other duration_s="slow" {utc_to_ns(reports[1]["started_utc"])}'])
    res = push(files, s)
    assert res.reports == 2 and res.error is None
    assert res.failed[0]["file"] == str(files[1])
    assert "field type conflict" in res.failed[0]["reason"]
    with Client(s) as c:
        ids = set(stored_run_ids(c, s.database))
    assert {reports[0]["run_id"], reports[2]["run_id"]} <= ids


def test_unreachable_spools_with_the_reason_then_a_write_drains_it(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    s = settings_for(server, request)
    first, second = sample_report(30, initcalls=2), sample_report(31, initcalls=2)
    d = deliver_or_note(first, replace(s, url=UNREACHABLE), tmp_path)
    assert d.status == "spooled" and d.note == "spooled" and d.run_id == first.run_id
    assert UNREACHABLE in (d.reason or "") and d.spool_file
    assert d.describe() == f"influx: not written ({d.reason}); spooled to {d.spool_file}"
    (entry,) = [Spool(spool_dir(tmp_path)).read(p) for p in Spool(spool_dir(tmp_path)).paths()]
    assert entry.header["kind"] == "unreachable" and entry.header["reason"] == d.reason

    d = deliver_or_note(second, s, tmp_path)
    assert d.status == "written" and d.note == "written" and d.replay is not None
    assert d.replay.reports == 1 and d.replay.left == 0
    assert d.describe() == f"influx: {d.points} points written, 1 spooled boot(s) replayed"
    with Client(s) as c:
        assert sorted(stored_run_ids(c, s.database)) == sorted([first.run_id, second.run_id])


def test_off_and_failed_say_why(tmp_path: Path) -> None:
    report = sample_report(40, initcalls=2)
    off = deliver_or_note(report, None, tmp_path)
    assert (off.status, off.note, off.points) == ("off", "off", 0)
    assert off.describe() == "influx: off (no [influx] table)"

    settings = InfluxSettings(url=UNREACHABLE, database="x")
    bad = deliver_or_note(replace(report, started_utc=None), settings, tmp_path)
    assert bad.status == "failed" and "started_utc" in (bad.reason or "")
    assert bad.note == f"failed: {bad.reason}"
    assert bad.describe() == f"influx: not written or spooled: {bad.reason}"

    blocked = tmp_path / "results"
    blocked.write_text("a file where the spool folder would go")
    full = deliver_or_note(report, settings, blocked)
    assert full.status == "failed" and full.run_id == report.run_id
    assert full.note.startswith("failed: ") and Spool(spool_dir(tmp_path)).paths() == []


def test_soak_point_delivers_the_same_way(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    s = settings_for(server, request)
    summary = SoakSummary(
        started_utc="2025-01-01T02:03:04Z",
        soak_id="soak-1",
        rig="sim-rig",
        board=None,
        variant=None,
        config=None,
        updated_utc=None,
        limits=Limits(4, None),
        sessions=1,
        elapsed_s=9.0,
        cycles=CycleCounts(run=4, classified=4, recovered=0, interrupted=0, unjournaled=0),
        failures=1,
        failure_rate=0.25,
        failure_rates={"panic": 0.25},
        measured=4,
        not_measured=0,
        status="completed",
        outcomes={"ok": 3, "panic": 1},
        power_to_ui=Distribution(n=3, p50=0.3),
        stages=[],
        overhead=Distribution(n=0),
        influx={},
        rss=Memory(None, None),
        folder="soak-1",
    )
    away = deliver_soak_point(summary, replace(s, url=UNREACHABLE), tmp_path)
    assert away.status == "spooled" and away.note == "spooled"
    (entry,) = [Spool(spool_dir(tmp_path)).read(p) for p in Spool(spool_dir(tmp_path)).paths()]
    assert entry.header["kind"] == "unreachable" and entry.header["run_id"] == "soak-1"
    assert deliver_soak_point(summary, s, tmp_path).note == "written"
    assert len(Spool(spool_dir(tmp_path)).paths()) == 1  # no drain: see deliver_soak_point
    assert deliver_soak_point(summary, None, tmp_path).note == "off"
    broken = deliver_soak_point(replace(summary, started_utc="yesterday"), s, tmp_path)
    assert broken.note.startswith("failed: started_utc")
    with Client(s) as c:
        res = c.query('SELECT "cycles_count" FROM "soak"', s.database)
    assert res[0]["series"][0]["values"][0][1] == 4
