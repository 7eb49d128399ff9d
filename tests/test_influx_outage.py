"""Outage: the real server stopped mid-run and started again; every boot lands once."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from click.testing import CliRunner

from rig.commands.influx import influx
from rig.config.influx import InfluxSettings
from rig.sinks.influx.client import Client
from rig.sinks.influx.deliver import Delivery, deliver
from rig.sinks.influx.points import report_lines
from rig.sinks.influx.server import PrivateServer, free_port
from rig.sinks.influx.spool import Spool, spool_dir
from tests.sample_report import sample_report, stored_run_ids

BOOTS = 40


def test_server_stopped_mid_run_every_boot_once(tmp_path: Path) -> None:
    srv = PrivateServer(tmp_path / "influxd", free_port(), free_port())
    results = tmp_path / "results"
    s = InfluxSettings(url=srv.url, database="soak", timeout_s=2.0)
    reports = [sample_report(i, initcalls=25) for i in range(BOOTS)]
    done: list[Delivery] = []

    def soak() -> None:  # a soak run: one boot after the other, as `rig run` delivers them
        for r in reports:
            done.append(deliver(r, s, results))
            time.sleep(0.01)

    def wait_for(n: int) -> None:
        deadline = time.monotonic() + 30
        while len(done) < n and time.monotonic() < deadline:
            time.sleep(0.005)

    try:
        srv.start()
        writer = threading.Thread(target=soak)
        writer.start()
        wait_for(10)
        srv.stop()  # mid-run, possibly with a write in flight
        wait_for(25)
        srv.start()
        writer.join(60)
        assert not writer.is_alive()

        statuses = [d.status for d in done]
        assert statuses[:5] == ["written"] * 5 and "spooled" in statuses
        assert statuses[-1] == "written"
        drained = sum(d.replay.reports for d in done if d.replay)
        assert drained > 0  # the first write after the restart drained the spool
        print(statuses.count("spooled"), "spooled,", drained, "drained by later writes")
        spool = Spool(spool_dir(results))
        for p in spool.paths():  # anything spooled after the drain, for `replay` below
            assert spool.read(p).header["kind"] in ("unreachable", "timeout")

        config = tmp_path / "rig.toml"
        config.write_text(
            f'[rig]\nresults_dir = "{results}"\n[influx]\nurl = "{s.url}"\ndatabase = "soak"\n'
        )
        out = CliRunner().invoke(influx, ["replay", "--config", str(config), "--json"])
        assert out.exit_code == 0, out.output
        assert json.loads(out.output)["left"] == 0 and spool.paths() == []

        with Client(s) as c:
            ids = stored_run_ids(c, "soak")
            assert sorted(ids) == sorted(r.run_id for r in reports)  # each once
            res = c.query('SELECT count("duration_s") FROM "initcall"', "soak")
            assert res[0]["series"][0]["values"][0][1] == 25 * BOOTS
            # replaying again changes nothing: point times are fixed
            c.write([line for r in reports[:5] for line in report_lines(r)])
            assert len(stored_run_ids(c, "soak")) == BOOTS
    finally:
        srv.stop()
