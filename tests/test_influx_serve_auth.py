"""`rig influx serve` against the real influxd: auth is on by default with a generated
admin password kept 0600 in the data dir (reused on the next start, never printed or
logged), and a cross-origin request without credentials reads, writes and drops nothing."""

from __future__ import annotations

import http.client
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner, Result

from rig.artifacts.rundir import write_json
from rig.commands.influx import influx
from rig.config.influx import InfluxSettings
from rig.errors import ConfigError
from rig.sinks.influx.client import Client
from rig.sinks.influx.server import ADMIN_PASSWORD, admin_password_file, free_port, running_pid
from tests.sample_report import sample_report, stored_run_ids
from tests.test_influx_auth import write_config

EVIL = "http://evil.example"
outputs: list[str] = []  # every CLI output of this module: none may hold the password


def cli(*args: str) -> Result:
    res = CliRunner().invoke(influx, list(args))
    outputs.append(res.output)
    return res


def serve(data: Path, port: int, rpc: int, *extra: str) -> Result:
    args = ["--data-dir", str(data), "--port", str(port), "--rpc-port", str(rpc)]
    return cli("serve", "--detach", *args, *extra)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """`rig influx serve --detach` with no password given: the default users get."""
    data = tmp_path_factory.mktemp("served") / "influxdb"
    mp = pytest.MonkeyPatch()
    mp.delenv("BOOTRIG_INFLUX_PASSWORD", raising=False)
    try:
        res = serve(data, free_port(), free_port(), "--json")
        assert res.exit_code == 0, res.output
        yield json.loads(res.output)
    finally:
        cli("stop", "--data-dir", str(data))
        mp.undo()
    assert running_pid(data) is None


def request(port: int, method: str, path: str, body: bytes | None = None) -> int:
    """A browser's cross-origin request: an Origin header, no credentials."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    headers = {"Origin": EVIL}
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def query(port: int, q: str, method: str = "POST") -> int:
    form = urlencode({"q": q, "db": "bootrig"})
    if method == "GET":
        return request(port, "GET", "/query?" + form)
    return request(port, "POST", "/query", form.encode())


def test_password_file_is_private_and_not_shown(served: dict[str, Any]) -> None:
    path = Path(served["password_file"])
    assert served["auth"] is True and served["username"] == "bootrig"
    assert served["password_generated"] is True and path.name == ADMIN_PASSWORD
    assert path.parent == Path(served["data_dir"]).resolve()
    st = path.lstat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_uid == os.geteuid()
    secret = path.read_text().strip()
    assert len(secret) >= 32
    assert stat.S_IMODE(Path(served["data_dir"]).stat().st_mode) == 0o700


def test_cross_origin_without_credentials_gets_401(served: dict[str, Any]) -> None:
    port = int(served["url"].rsplit(":", 1)[1])
    assert query(port, "CREATE DATABASE evil") == 401
    assert query(port, 'DROP DATABASE "bootrig"') == 401
    assert query(port, "SHOW DATABASES") == 401
    assert query(port, "SHOW DATABASES", "GET") == 401
    assert query(port, 'SELECT * FROM "boot"', "GET") == 401
    assert request(port, "POST", "/write?db=bootrig", b"boot f=1 1") == 401
    # influxd 1.6 cannot be told to refuse an Origin: it still echoes it, but without
    # credentials nothing gets through (docs/influxdb.md).
    settings = InfluxSettings(
        url=served["url"], username="bootrig", password_file=Path(served["password_file"])
    )
    with Client(settings) as c:
        names = json.dumps(c.query("SHOW DATABASES"))
    assert "bootrig" in names and "evil" not in names


def rig_config(folder: Path, served: dict[str, Any], password_file: str) -> Path:
    line = f'password_file = "{password_file}"'
    return write_config(folder, served["url"], "bootrig", line, user="bootrig")


def test_rig_writes_and_reads_with_the_password_file(
    served: dict[str, Any], tmp_path: Path
) -> None:
    # A relative password_file resolves against the config's folder, as documented.
    pw = Path(os.path.relpath(served["password_file"], tmp_path / "cfg"))
    cfg = rig_config(tmp_path / "cfg", served, str(pw))
    report = sample_report(7, initcalls=3).to_json()
    run = tmp_path / "cfg" / "results" / report["run_id"]
    run.mkdir(parents=True)
    write_json(run / "report.json", report)
    res = cli("push", str(run.parent), "--config", str(cfg), "--json")
    assert res.exit_code == 0, res.output
    res = cli("status", "--config", str(cfg), "--json")
    assert res.exit_code == 0 and json.loads(res.output)["boots"] == 1
    settings = InfluxSettings(
        url=served["url"], username="bootrig", password_file=Path(served["password_file"])
    )
    with Client(settings) as c:
        assert stored_run_ids(c, "bootrig") == [report["run_id"]]


def test_second_start_reuses_the_file_then_stop(tmp_path: Path) -> None:
    data = tmp_path / "influxdb"
    port, rpc = free_port(), free_port()
    mp = pytest.MonkeyPatch()
    mp.delenv("BOOTRIG_INFLUX_PASSWORD", raising=False)
    try:
        first = serve(data, port, rpc, "--json")
        assert first.exit_code == 0, first.output
        path = Path(json.loads(first.output)["password_file"])
        secret, inode = path.read_text(), path.stat().st_ino
        assert cli("stop", "--data-dir", str(data)).exit_code == 0
        assert running_pid(data) is None

        second = serve(data, port, rpc)  # the terminal form this time
        assert second.exit_code == 0, second.output
        assert "auth on: user bootrig" in second.output and "(reused)" in second.output
        assert str(path) in second.output.replace("\n", "")
        assert path.read_text() == secret and path.stat().st_ino == inode
        settings = InfluxSettings(url=f"http://127.0.0.1:{port}", username="bootrig",
                                  password_file=path)  # fmt: skip
        with Client(settings) as c:
            assert "bootrig" in json.dumps(c.query("SHOW DATABASES"))

        # The users were created with this password: another one is refused, and says so.
        mp.setenv("BOOTRIG_INFLUX_PASSWORD", "not-the-admin-password")
        assert cli("stop", "--data-dir", str(data)).exit_code == 0
        wrong = serve(data, port, rpc, "--json")
        assert wrong.exit_code == 3
        assert "created with another password" in json.loads(wrong.output)["error"]
        assert running_pid(data) is None  # a failed start leaves no server behind
    finally:
        cli("stop", "--data-dir", str(data))
        mp.undo()
    assert running_pid(data) is None
    # Nothing but the password file holds the password: not influxd's log, not its config.
    for p in data.rglob("*"):
        if p.is_file() and p != path:
            assert secret.strip().encode() not in p.read_bytes(), p
    for text in outputs:
        assert secret.strip() not in text


def test_no_auth_is_the_unsafe_escape_hatch(tmp_path: Path) -> None:
    data = tmp_path / "open"
    try:
        res = serve(data, port := free_port(), free_port(), "--no-auth")
        assert res.exit_code == 0, res.output
        assert "auth off (--no-auth)" in res.output and "web page" in res.output
        assert not (data / ADMIN_PASSWORD).exists()
        assert query(port, "SHOW DATABASES") == 200
    finally:
        cli("stop", "--data-dir", str(data))
    assert running_pid(data) is None


def test_password_file_created_0600_under_any_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        path, created = admin_password_file(tmp_path / "d")
    finally:
        os.umask(old)
    assert created and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert admin_password_file(tmp_path / "d") == (path, False)

    path.write_text("")  # a start that died between creating and writing it
    assert admin_password_file(tmp_path / "d") == (path, True) and path.read_text().strip()

    path.chmod(0o644)  # someone opened it up: refused, naming the file and the fix
    with pytest.raises(ConfigError, match="chmod 600"):
        admin_password_file(tmp_path / "d")
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="not a regular file"):
        admin_password_file(tmp_path / "d")
    assert not (tmp_path / "elsewhere").exists()
