"""The `[influx]` table of the rig config. A password never lives in the TOML (configs
get copied, committed, snapshotted): the table names an environment variable or a file."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from rig.config.tomlcheck import Table, load_toml
from rig.errors import ConfigError

AUTH_SCHEMES = ("basic", "query", "token")
# Coarser precisions could merge two boots into one timestamp, i.e. overwrite a boot.
PRECISIONS = ("ns", "u")
_SECRET_KEYS = ("password", "token", "secret", "pass", "auth_token")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class InfluxSettings:
    url: str = "http://127.0.0.1:18086"  # `rig influx serve`'s default port
    database: str = "bootrig"
    retention_policy: str = ""
    username: str | None = None
    password_env: str | None = None
    password_file: Path | None = None
    auth_scheme: str = "basic"
    timeout_s: float = 5.0
    precision: str = "ns"
    create_database: bool = True
    batch_points: int = 10_000
    enabled: bool = True

    def password(self) -> str | None:
        """The secret, read now (never stored on the settings, so never in a repr)."""
        if self.password_env:
            value = os.environ.get(self.password_env)
            if not value:
                raise ConfigError(
                    f"influx: environment variable {self.password_env} (password_env) is not set"
                )
            return value
        if self.password_file:
            try:
                value = self.password_file.read_text(encoding="utf-8").strip()
            except OSError as e:
                raise ConfigError(
                    f"influx: password_file {self.password_file}: {e.strerror or e}"
                ) from None
            if not value:
                raise ConfigError(f"influx: password_file {self.password_file} is empty")
            return value
        return None


def check_url(t: Table, key: str, url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        t.error(key, "an http:// or https:// URL with a host", url)
    if parts.username or parts.password:
        t.fail(
            key,
            "credentials do not belong in the URL; use username and password_env or password_file",
        )
    if parts.query or parts.fragment:
        t.error(key, "a URL without query or fragment", url)
    return url.rstrip("/")


def parse_settings(t: Table, base: Path) -> InfluxSettings:
    """Validate an `[influx]` table; relative paths are relative to `base` (the config's dir)."""
    for key in _SECRET_KEYS:
        if t.has(key):
            t.fail(
                key,
                "never put a secret in the config file; "
                'set password_env = "VARIABLE" or password_file = "PATH" instead',
            )
    d = InfluxSettings()
    url = check_url(t, "url", t.str("url", d.url))
    database = t.str("database", d.database)
    if not database:
        t.error("database", "a database name", database)
    password_env = t.str("password_env", None)
    if password_env is not None and not _NAME.match(password_env):
        t.error("password_env", "an environment variable name", password_env)
    pw_file = t.str("password_file", None)
    if password_env and pw_file:
        t.fail("password_file", "set password_env or password_file, not both")
    s = InfluxSettings(
        url=url,
        database=database,
        retention_policy=t.str("retention_policy", ""),
        username=t.str("username", None),
        password_env=password_env,
        password_file=(base / pw_file) if pw_file else None,
        auth_scheme=t.str("auth", d.auth_scheme, choices=AUTH_SCHEMES),
        timeout_s=t.seconds("timeout_s", d.timeout_s, min=0.001),
        precision=t.str("precision", d.precision, choices=PRECISIONS),
        create_database=t.bool("create_database", d.create_database),
        batch_points=t.int("batch_points", d.batch_points, min=1),
        enabled=t.bool("enabled", True),
    )
    t.done()
    secret = s.password_env or s.password_file
    if s.username and not secret:
        t.fail("username", "a username needs password_env or password_file")
    if s.auth_scheme == "token" and not secret:
        t.fail("auth", "'token' needs password_env or password_file")
    return s


@dataclass(frozen=True)
class InfluxConfig:
    """What the influx commands need from a rig config: the sink and the results folder."""

    settings: InfluxSettings | None
    results_dir: Path


def load_influx_config(path: Path) -> InfluxConfig:
    """Only `[rig].results_dir` (as rig.config.load resolves it) and `[influx]`."""
    path = Path(path)
    root = Table(path, load_toml(path))
    rig = root.table("rig")
    results_dir = (path.parent / rig.str("results_dir", "../results")).resolve()
    settings = parse_settings(root.table("influx"), path.parent) if root.has("influx") else None
    return InfluxConfig(settings=settings, results_dir=results_dir)
