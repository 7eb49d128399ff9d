"""Auth against a real influxd with auth enabled: credentials from the environment or a
secret file, a wrong password is an error (and the boot is spooled, not lost), and the
secret appears in no artifact, spool file, log or CLI output."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from rig.artifacts.rundir import write_json
from rig.commands.influx import influx
from rig.config.influx import InfluxSettings
from rig.errors import SinkError
from rig.sinks.influx.client import Client, InfluxError
from rig.sinks.influx.deliver import deliver
from rig.sinks.influx.server import PrivateServer, ensure_admin, free_port, private_server
from tests.sample_report import sample_report, stored_run_ids

PASSWORD = "pw-" + secrets.token_urlsafe(18)
WRONG = "wrong-" + secrets.token_urlsafe(18)
ENV = "BOOTRIG_TEST_INFLUX_PASSWORD"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateServer]:
    with private_server(tmp_path_factory.mktemp("influxd-auth"), auth=True) as srv:
        ensure_admin(srv.port, "admin", PASSWORD)
        yield srv


def write_config(
    folder: Path, url: str, db: str, secret_line: str, scheme: str = "basic", user: str = "admin"
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rig.toml"
    path.write_text(
        f'[rig]\nresults_dir = "results"\n\n[influx]\nurl = "{url}"\ndatabase = "{db}"\n'
        f'username = "{user}"\nauth = "{scheme}"\n{secret_line}\n'
    )
    return path


def cli(outputs: list[str], *args: str) -> Result:
    res = CliRunner().invoke(influx, list(args))
    outputs.append(res.output)
    return res


def test_env_file_and_query_credentials(
    server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, PASSWORD)
    s = InfluxSettings(url=server.url, database="creds", username="admin", password_env=ENV)
    assert deliver(sample_report(0, initcalls=5), s, tmp_path).status == "written"

    (tmp_path / "influx.secret").write_text(PASSWORD + "\n")
    outputs: list[str] = []
    for scheme in ("basic", "query"):
        cfg = write_config(
            tmp_path / scheme, server.url, "creds", 'password_file = "../influx.secret"', scheme
        )
        res = cli(outputs, "status", "--config", str(cfg), "--json")
        assert res.exit_code == 0, res.output
        assert json.loads(res.output)["boots"] == 1

    with pytest.raises(InfluxError) as err:  # no credentials at all
        Client(InfluxSettings(url=server.url, database="creds")).write(["m f=1 1"])
    assert err.value.kind == "auth"


def test_wrong_password_is_an_error_and_spools(
    server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, WRONG)
    s = InfluxSettings(url=server.url, database="wrong", username="admin", password_env=ENV)
    with pytest.raises(InfluxError) as err:
        Client(s).write(["m f=1 1"])
    assert err.value.kind == "auth" and "authorization failed" in str(err.value)

    report = sample_report(1, initcalls=5)
    d = deliver(report, s, tmp_path / "results")
    assert d.status == "spooled" and "authorization failed" in (d.reason or "")

    cfg = write_config(tmp_path, server.url, "wrong", f'password_env = "{ENV}"')
    outputs: list[str] = []
    res = cli(outputs, "replay", "--config", str(cfg))
    assert res.exit_code == 3 and "authorization failed" in res.output  # the sink failed
    monkeypatch.setenv(ENV, PASSWORD)  # fixed: the spooled boot goes through
    res = cli(outputs, "replay", "--config", str(cfg), "--json")
    assert res.exit_code == 0 and json.loads(res.output)["reports"] == 1
    with Client(s) as c:
        assert stored_run_ids(c, "wrong") == [report.run_id]

    monkeypatch.delenv(ENV)
    d = deliver(sample_report(2, initcalls=5), s, tmp_path / "results")
    assert d.status == "spooled" and ENV in (d.reason or "")
    res = cli(outputs, "status", "--config", str(cfg))
    assert res.exit_code == 3 and ENV in res.output


def test_secret_never_leaks(
    server: PrivateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outputs: list[str] = []
    results = tmp_path / "results"
    # backfill two artifact folders with the right password, spool one with a wrong one
    monkeypatch.setenv(ENV, PASSWORD)
    cfg = write_config(tmp_path, server.url, "leak", f'password_env = "{ENV}"')
    for i in (3, 4):
        r = sample_report(i, initcalls=5).to_json()
        (results / r["run_id"]).mkdir(parents=True)
        write_json(results / r["run_id"] / "report.json", r)
    assert cli(outputs, "push", str(results), "--config", str(cfg)).exit_code == 0
    assert cli(outputs, "push", str(results), "--config", str(cfg), "--json").exit_code == 0
    # `p=` in the URL: influxd's access log must show it redacted
    cfg_q = write_config(tmp_path / "q", server.url, "leak", f'password_env = "{ENV}"', "query")
    assert cli(outputs, "status", "--config", str(cfg_q)).exit_code == 0
    monkeypatch.setenv(ENV, WRONG)
    s = InfluxSettings(url=server.url, database="leak", username="admin", password_env=ENV)
    d = deliver(sample_report(5, initcalls=5), s, results)
    outputs += [json.dumps(asdict(d)), d.describe()]
    outputs.append(cli(outputs, "push", str(results), "--config", str(cfg), "--json").output)
    cli(outputs, "status", "--config", str(cfg))
    cli(outputs, "status", "--config", str(cfg), "--json")
    cli(outputs, "replay", "--config", str(cfg), "--json")
    assert any("authorization failed" in o for o in outputs)

    # `rig influx serve --auth` of its own, detached, then stopped
    monkeypatch.setenv("BOOTRIG_INFLUX_PASSWORD", PASSWORD)
    data = tmp_path / "served"
    try:
        res = cli(outputs, "serve", "--auth", "--username", "admin", "--detach",
                  "--data-dir", str(data), "--port", str(free_port()),
                  "--rpc-port", str(free_port()))  # fmt: skip
        assert res.exit_code == 0, res.output
    finally:
        cli(outputs, "stop", "--data-dir", str(data))

    needles = [PASSWORD.encode(), WRONG.encode()]
    files = [p for p in (*tmp_path.rglob("*"), *server.data_dir.rglob("*")) if p.is_file()]
    assert any(".influx-spool" in str(p) for p in files)
    assert server.log_path in files and (data / "influxd.log") in files
    for path in files:
        blob = path.read_bytes()
        for needle in needles:
            assert needle not in blob, f"secret found in {path}"
    for text in outputs:
        assert PASSWORD not in text and WRONG not in text


def test_ensure_admin_without_a_server_is_a_sink_error() -> None:
    # `rig influx serve` reports a SinkError (exit 3) with its message; a bare OSError
    # would not say which server it could not reach.
    port = free_port()
    with pytest.raises(SinkError, match=f"127.0.0.1:{port}") as err:
        ensure_admin(port, "admin", PASSWORD)
    assert PASSWORD not in str(err.value)
