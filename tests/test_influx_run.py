"""`rig run` with an [influx] table: the boot is written, or spooled while the server is
down and replayed after (RigConfig.influx, and an "influx" object in `rig run --json`; see
docs/influxdb.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rig.commands.influx import influx
from rig.config.influx import InfluxSettings
from rig.sinks.influx.client import Client
from rig.sinks.influx.server import private_server
from tests.e2e import make_config, rig_run_json
from tests.sample_report import stored_run_ids

pytestmark = pytest.mark.slow


def test_rig_run_writes_then_spools_then_replays(tmp_path: Path) -> None:
    with private_server(tmp_path / "influxd") as srv:
        extra = f'\n[influx]\nurl = "{srv.url}"\ndatabase = "runs"\ntimeout_s = 2\n'
        config = make_config(tmp_path, extra=extra)
        first = rig_run_json(config)
        assert first["influx"]["status"] == "written"
        srv.stop()
        second = rig_run_json(config)
        assert second["influx"]["status"] == "spooled"
        srv.start()
        out = CliRunner().invoke(influx, ["replay", "--config", str(config), "--json"])
        assert out.exit_code == 0, out.output
        with Client(InfluxSettings(url=srv.url, database="runs")) as c:
            ids = stored_run_ids(c, "runs")
        assert sorted(ids) == sorted(r["report"]["run_id"] for r in (first, second))
