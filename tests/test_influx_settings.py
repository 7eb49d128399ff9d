"""The [influx] table: validation names file and key; secrets never in the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.config.influx import load_influx_config
from rig.errors import ConfigError


def write(tmp_path: Path, influx: str) -> Path:
    path = tmp_path / "config" / "rig.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f'[rig]\nresults_dir = "../out"\n\n[influx]\n{influx}\n')
    return path


def test_defaults_and_results_dir(tmp_path: Path) -> None:
    cfg = load_influx_config(write(tmp_path, 'url = "http://127.0.0.1:9999/"'))
    assert cfg.results_dir == (tmp_path / "out").resolve()
    s = cfg.settings
    assert s is not None
    assert (s.url, s.database, s.precision, s.auth_scheme) == (
        "http://127.0.0.1:9999",
        "bootrig",
        "ns",
        "basic",
    )
    assert s.password() is None


def test_no_table_means_no_sink(tmp_path: Path) -> None:
    path = tmp_path / "rig.toml"
    path.write_text("[power]\nport = 'sim'\n")
    assert load_influx_config(path).settings is None


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ('password = "hunter2"', "never put a secret"),
        ('token = "abc"', "never put a secret"),
        ('url = "http://rig:hunter2@127.0.0.1:8086"', "credentials do not belong"),
        ('url = "ftp://127.0.0.1"', "key 'influx.url'"),
        ('url = "http://127.0.0.1:8086/?u=a"', "key 'influx.url'"),
        ('precision = "s"', "key 'influx.precision'"),
        ("timeout_s = 0", "key 'influx.timeout_s'"),
        ('username = "rig"', "needs password_env or password_file"),
        ('password_env = "A"\npassword_file = "f"', "not both"),
        ('password_env = "not a name"', "key 'influx.password_env'"),
        ('databse = "x"', "unknown key 'influx.databse'"),
    ],
)
def test_errors_name_file_and_key(tmp_path: Path, body: str, needle: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(ConfigError) as err:
        load_influx_config(path)
    assert str(path) in str(err.value) and needle in str(err.value)
    assert "hunter2" not in str(err.value)


def test_secret_from_env_or_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = load_influx_config(write(tmp_path, 'username = "rig"\npassword_env = "RIG_PW"')).settings
    assert s is not None
    with pytest.raises(ConfigError, match="RIG_PW"):
        s.password()
    monkeypatch.setenv("RIG_PW", "from-env")
    assert s.password() == "from-env"
    assert "from-env" not in repr(s)

    (tmp_path / "config" / "influx.secret").write_text("from-file\n")
    s = load_influx_config(write(tmp_path, 'password_file = "influx.secret"')).settings
    assert s is not None and s.password() == "from-file"
    s = load_influx_config(write(tmp_path, 'password_file = "missing"')).settings
    assert s is not None
    with pytest.raises(ConfigError, match="missing"):
        s.password()
