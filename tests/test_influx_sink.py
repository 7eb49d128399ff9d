"""The InfluxDB sink against a real private influxd: round trip, idempotence, push,
status, and a slow and a rejecting server (both spool, nothing is lost)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from rig.artifacts.rundir import write_json
from rig.commands.influx import influx
from rig.config.influx import InfluxSettings
from rig.model.report import PowerSummary
from rig.sinks.influx.client import Client
from rig.sinks.influx.deliver import deliver
from rig.sinks.influx.points import utc_to_ns
from rig.sinks.influx.replay import replay
from rig.sinks.influx.server import PrivateServer, free_port, private_server, running_pid
from rig.sinks.influx.spool import Spool, spool_dir
from tests.influx_env import influx_server, settings_for  # noqa: F401 - the fixture `server`
from tests.sample_report import sample_report, stored_run_ids


def count(client: Client, db: str, measurement: str, field: str) -> int:
    res = client.query(f'SELECT count("{field}") FROM "{measurement}"', db)
    series = res[0].get("series")
    return int(series[0]["values"][0][1]) if series else 0


def config_file(tmp_path: Path, s: InfluxSettings, results: Path | None = None) -> Path:
    path = tmp_path / "rig.toml"
    path.write_text(
        f'[rig]\nresults_dir = "{results or tmp_path / "results"}"\n\n'
        f'[influx]\nurl = "{s.url}"\ndatabase = "{s.database}"\ntimeout_s = {s.timeout_s}\n'
    )
    return path


def test_round_trip(server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    s = settings_for(server, request)
    report = sample_report(1)
    report.board = "lab 3, bench=A"
    report.stages[0].name = "boot loader"
    d = deliver(report, s, tmp_path)
    assert d.status == "written" and d.points == 508
    with Client(s) as c:
        res = c.query(
            'SELECT "duration_s", "source" FROM "stage" WHERE "stage" = \'boot loader\'',
            s.database,
        )
        t, duration, source = res[0]["series"][0]["values"][0]
        assert t == utc_to_ns(report.started_utc)
        assert duration == pytest.approx(report.stages[0].duration_s, rel=1e-15)
        assert source == "gpio"
        res = c.query('SHOW TAG VALUES FROM "boot" WITH KEY = "board"', s.database)
        assert res[0]["series"][0]["values"] == [["board", "lab 3, bench=A"]]
        assert count(c, s.database, "initcall", "duration_s") == 500
        assert count(c, s.database, "advisory", "gain_s") == 2
        assert stored_run_ids(c, s.database) == [report.run_id]


def test_stage_energy_reaches_influx(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A supply's readings give stages energy: it is stored beside the times, as
    floats, and a stage without readings simply has none."""
    s = settings_for(server, request)
    report = sample_report(2)
    first = report.stages[0]
    first.energy_j = 1  # a JSON integer: still a float field
    first.energy_uncertainty_j, first.mean_current_a, first.peak_current_a = 0.02, 0.41, 1.7
    report.power = PowerSummary(readings=1, stages_energy_j=1.0, stages_energy_uncertainty_j=0.02)
    assert deliver(report, s, tmp_path).status == "written"
    with Client(s) as c:
        q = 'SELECT "energy_j", "energy_uncertainty_j", "mean_current_a", "peak_current_a" '
        res = c.query(q + f'FROM "stage" WHERE "stage" = \'{first.name}\'', s.database)
        assert res[0]["series"][0]["values"][0][1:] == [1.0, 0.02, 0.41, 1.7]
        assert count(c, s.database, "stage", "energy_j") == 1
        assert count(c, s.database, "boot", "stages_energy_j") == 1
        # A float field: a later boot's 2.5 J must not be refused as a type conflict.
        res = c.query('SHOW FIELD KEYS FROM "stage"', s.database)
        kinds = dict(res[0]["series"][0]["values"])
        assert kinds["energy_j"] == "float" and kinds["peak_current_a"] == "float"


def test_rewrite_overwrites(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    s = settings_for(server, request)
    reports = [sample_report(i, initcalls=20) for i in range(3)]
    for _ in range(2):
        for r in reports:
            assert deliver(r, s, tmp_path).status == "written"
    # push the same boots from artifact folders, twice: still one point each
    results = tmp_path / "results"
    for r in reports:
        (results / r.run_id).mkdir(parents=True)
        write_json(results / r.run_id / "report.json", r.to_json())
    runner = CliRunner()
    for _ in range(2):
        out = runner.invoke(
            influx, ["push", str(results), "--config", str(config_file(tmp_path, s)), "--json"]
        )
        assert out.exit_code == 0, out.output
        assert json.loads(out.output)["reports"] == 3
    with Client(s) as c:
        assert sorted(stored_run_ids(c, s.database)) == sorted(r.run_id for r in reports)
        assert count(c, s.database, "initcall", "duration_s") == 60
        assert count(c, s.database, "stage", "duration_s") == 15


def test_push_reports_bad_folders_and_status(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    s = settings_for(server, request)
    good = tmp_path / "results" / "good"
    bad = tmp_path / "results" / "bad"
    good.mkdir(parents=True)
    bad.mkdir()
    write_json(good / "report.json", sample_report(5, initcalls=3).to_json())
    write_json(
        bad / "report.json", {**sample_report(6, initcalls=3).to_json(), "started_utc": None}
    )
    config = config_file(tmp_path, s)
    runner = CliRunner()
    out = runner.invoke(influx, ["push", str(good), str(bad), "--config", str(config), "--json"])
    assert out.exit_code == 2  # a report that cannot become points is bad input
    res = json.loads(out.output)
    assert res["reports"] == 1 and "started_utc" in res["failed"][0]["reason"]
    out = runner.invoke(influx, ["push", str(tmp_path / "nowhere"), "--config", str(config)])
    assert out.exit_code == 2

    out = runner.invoke(influx, ["status", "--config", str(config), "--json"])
    assert out.exit_code == 0, out.output
    st = json.loads(out.output)
    assert st["reachable"] and st["version"].startswith("1.")
    assert st["database_exists"] and st["boots"] == 1 and st["spool"]["reports"] == 0
    out = runner.invoke(influx, ["status", "--config", str(config)])
    assert out.exit_code == 0 and "boots stored" in out.output


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A 127.0.0.1 listener that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.05)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                held.append(sock.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for c in held:
            c.close()
        sock.close()


def test_slow_server_spools_then_replays(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    s = settings_for(server, request)
    report = sample_report(7, initcalls=10)
    with silent_server() as port:
        slow = replace(s, url=f"http://127.0.0.1:{port}", timeout_s=0.3)
        t0 = time.monotonic()
        d = deliver(report, slow, tmp_path)
        assert time.monotonic() - t0 < 3
    assert d.status == "spooled" and "no answer within 0.3 s" in (d.reason or "")
    spool = Spool(spool_dir(tmp_path))
    (entry,) = [spool.read(p) for p in spool.paths()]
    assert entry.header["kind"] == "timeout" and entry.header["run_id"] == report.run_id

    config = config_file(tmp_path, s, results=tmp_path)
    out = CliRunner().invoke(influx, ["replay", "--config", str(config), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["reports"] == 1 and spool.paths() == []
    with Client(s) as c:
        assert stored_run_ids(c, s.database) == [report.run_id]


def test_rejected_write_is_spooled_with_its_reason(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    s = settings_for(server, request)
    report = sample_report(8, initcalls=5)
    t = utc_to_ns(report.started_utc)
    with Client(s) as c:
        # A string where the sink writes a float, in the same shard: the server says 400.
        c.write([f'stage,stage=other duration_s="slow" {t}'])
    d = deliver(report, s, tmp_path)
    assert d.status == "spooled" and "field type conflict" in (d.reason or "")
    spool = Spool(spool_dir(tmp_path))
    entry = spool.read(spool.paths()[0])
    assert entry.header["kind"] == "rejected" and "field type conflict" in entry.header["reason"]

    # Replay keeps it (a boot is never dropped) and says why, other boots still go through.
    ok = sample_report(9, initcalls=5)
    ok.started_utc = "2030-01-01T00:00:00Z"  # another shard: no conflict
    assert deliver(ok, replace(s, url="http://127.0.0.1:9"), tmp_path).status == "spooled"
    with Client(s) as c:
        res = replay(c, spool, batch_points=10_000)
    assert res.reports == 1 and res.left == 1
    assert "field type conflict" in res.rejected[0]["reason"]
    depth = spool.depth()
    assert depth["reports"] == 1 and depth["rejected"][0]["file"] == entry.path.name
    assert spool.read(spool.paths()[0]).header["attempts"] == 2


def test_server_always_stopped(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), private_server(tmp_path / "a") as srv:
        pid = srv.pid
        conf = (tmp_path / "a" / "influxd.conf").read_text()
        binds = [line for line in conf.splitlines() if "bind-address" in line]
        assert len(binds) == 2 and all('"127.0.0.1:' in line for line in binds)
        raise RuntimeError("a failing test")
    assert srv.proc is None and pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_serve_detach_and_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BOOTRIG_INFLUX_PASSWORD", raising=False)
    data = tmp_path / "srv"
    port = free_port()
    runner = CliRunner()
    out = runner.invoke(
        influx,
        [
            "serve",
            "--detach",
            "--data-dir",
            str(data),
            "--port",
            str(port),
            "--rpc-port",
            str(free_port()),
            "--json",
        ],
    )
    try:
        assert out.exit_code == 0, out.output
        info = json.loads(out.output)
        assert info["url"] == f"http://127.0.0.1:{port}" and running_pid(data) == info["pid"]
        # auth is on by default: the generated admin password is in the data dir
        assert info["auth"] is True and info["password_file"] == str(
            (data / "admin-password").resolve()
        )
        s = InfluxSettings(
            url=info["url"], username="bootrig", password_file=data / "admin-password"
        )
        with Client(s) as c:
            assert "bootrig" in json.dumps(c.query("SHOW DATABASES"))
    finally:
        out = runner.invoke(influx, ["stop", "--data-dir", str(data), "--json"])
    assert json.loads(out.output)["stopped"] is True
    assert running_pid(data) is None


def test_serve_foreground_stops_on_sigterm(tmp_path: Path) -> None:
    code = "from rig.commands.influx import influx; influx()"
    args = ["serve", "--data-dir", str(tmp_path / "fg"), "--port", str(free_port()),
            "--rpc-port", str(free_port()), "--json"]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    try:
        lines = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("}"):
                break
        info = json.loads("".join(lines))
        assert running_pid(tmp_path / "fg") == info["pid"]
    finally:
        os.kill(proc.pid, 15)
        proc.wait(15)
    assert running_pid(tmp_path / "fg") is None


def test_missing_database_without_create_is_spooled(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    s = replace(settings_for(server, request), create_database=False)
    d = deliver(sample_report(10, initcalls=2), s, tmp_path)
    assert d.status == "spooled" and "database not found" in (d.reason or "")
    spool = Spool(spool_dir(tmp_path))
    assert spool.read(spool.paths()[0]).header["kind"] == "http_error"
