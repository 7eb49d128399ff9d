"""`rig influx`: a private InfluxDB server, backfill, spool replay and status."""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.markup import escape
from rich.table import Table

from rig.commands.common import config_option, console, emit_json, fail, json_option
from rig.config.influx import InfluxConfig, InfluxSettings, load_influx_config
from rig.errors import EXIT_INPUT, EXIT_OK, EXIT_RIG_FAILED, SinkError, bounded
from rig.sinks.influx.client import AUTH, Client, InfluxError
from rig.sinks.influx.replay import replay as replay_spool
from rig.sinks.influx.server import (
    DEFAULT_DATA_DIR,
    DEFAULT_USER,
    PrivateServer,
    admin_password_file,
    ensure_admin,
    find_influxd,
    stop_detached,
)
from rig.sinks.influx.sink import push as push_reports
from rig.sinks.influx.sink import report_files
from rig.sinks.influx.sink import status as server_status
from rig.sinks.influx.spool import Spool, spool_dir

influx_config_option = config_option("Rig configuration with an [influx] table.")
data_dir_option = click.option(
    "--data-dir",
    type=click.Path(path_type=Path),
    default=DEFAULT_DATA_DIR,
    show_default=True,
    help="Data, meta, WAL, config and log of the private server.",
)


def _load(config_path: Path, as_json: bool) -> tuple[InfluxSettings, InfluxConfig]:
    cfg = load_influx_config(config_path)  # a ConfigError: exit 2 (json_option)
    if cfg.settings is None:
        fail(f"{config_path}: no [influx] table (see docs/influxdb.md)", as_json)
    return cfg.settings, cfg


@click.group()
def influx() -> None:
    """Boot reports in InfluxDB: serve a private server, push, replay, status."""


@influx.command()
@data_dir_option
@click.option("--port", type=int, default=18086, show_default=True, help="HTTP port on 127.0.0.1.")
@click.option(
    "--rpc-port", type=int, default=18088, show_default=True, help="RPC (backup) port on 127.0.0.1."
)
@click.option("--database", default="bootrig", show_default=True, help="Database to create.")
@click.option(
    "--auth/--no-auth",
    default=True,
    show_default=True,
    help="Require credentials (admin user created on the first start). --no-auth is "
    "unsafe: any local process and any web page open on this host can read, write and "
    "drop the data.",
)
@click.option("--username", default=DEFAULT_USER, show_default=True, help="Admin user.")
@click.option(
    "--password-env",
    default="BOOTRIG_INFLUX_PASSWORD",
    show_default=True,
    help="Environment variable holding the admin password; when it is not set, a "
    "generated one is kept in DATA_DIR/admin-password (mode 0600).",
)
@click.option(
    "--password-file",
    type=click.Path(path_type=Path),
    help="File holding the admin password, instead of --password-env.",
)
@click.option("--influxd", "influxd_path", help="influxd binary (default: from PATH).")
@click.option("--detach", is_flag=True, help="Return once it answers; stop with `stop`.")
@json_option
@click.pass_context
def serve(
    ctx: click.Context,
    data_dir: Path,
    port: int,
    rpc_port: int,
    database: str,
    auth: bool,
    username: str,
    password_env: str,
    password_file: Path | None,
    influxd_path: str | None,
    detach: bool,
    as_json: bool,
) -> None:
    """Run a private InfluxDB (Debian's influxd) bound to 127.0.0.1 only, with auth."""
    find_influxd(influxd_path)  # a SinkError (3) before any file is written
    settings, generated = _serve_settings(
        ctx, data_dir, port, database, auth, username, password_env, password_file
    )
    secret = settings.password()  # a ConfigError: exit 2
    srv = PrivateServer(data_dir, port, rpc_port, auth=auth, influxd=influxd_path)
    if not detach:
        # A SIGTERM (make, a test, a service manager) must stop influxd too, like Ctrl-C.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:  # from here on every way out stops the server, unless it is detached
        srv.start()
        created = bool(auth and secret and ensure_admin(port, username, secret))
        with Client(settings) as client:
            if created:
                _only_our_admin(client, username)
            client.create_database()
            version = client.ping()
        _print_serving(srv, version, database, settings, generated, detach, as_json)
        if detach:
            srv.proc = None  # leave it running; `stop` finds it by its PID file
            return
        assert srv.proc is not None
        code = srv.proc.wait()
        fail(f"influxd exited with {code}: {srv.log_tail()}", as_json, EXIT_RIG_FAILED)
    except InfluxError as e:  # the sink failed: 3 (json_option), once the server is stopped
        if e.kind == AUTH:  # a reused data dir whose admin has another password
            raise InfluxError(f"{e}; {_which_password(settings)}", e.kind, e.status) from None
        raise
    except KeyboardInterrupt:
        pass
    finally:
        if not detach:  # a second SIGTERM must not cut the stop short
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        srv.stop()


def _serve_settings(
    ctx: click.Context,
    data_dir: Path,
    port: int,
    database: str,
    auth: bool,
    username: str,
    password_env: str,
    password_file: Path | None,
) -> tuple[InfluxSettings, bool | None]:
    """Where the admin password comes from: --password-file, the environment variable
    (when set, or named explicitly), else the data dir's generated file. The second value
    says whether that file was just created (None: no generated file)."""
    url = f"http://127.0.0.1:{port}"
    if not auth:
        return InfluxSettings(url=url, database=database), None
    explicit_env = ctx.get_parameter_source("password_env") is not ParameterSource.DEFAULT
    generated: bool | None = None
    if password_file is None and not explicit_env and not os.environ.get(password_env):
        path, generated = admin_password_file(data_dir)
        password_file = path.resolve()
    return InfluxSettings(
        url=url,
        database=database,
        username=username,
        password_env=None if password_file else password_env,
        password_file=password_file,
    ), generated


def _only_our_admin(client: Client, username: str) -> None:
    """A fresh auth-enabled server accepts one unauthenticated CREATE USER: ours must have
    been the only one, or someone else raced us to an admin account."""
    series = client.query("SHOW USERS")[0].get("series") or [{}]
    users = [row[0] for row in series[0].get("values") or []]
    if users != [username]:
        raise SinkError(
            f"unexpected users on a fresh server ({', '.join(map(str, users))}): someone "
            "else created a user while it started; remove the data dir and start again"
        )


def _which_password(s: InfluxSettings) -> str:
    where = f"password_file {s.password_file}" if s.password_file else f"${s.password_env}"
    return (
        f"the data dir's users were created with another password than {where}: give "
        "that one (--password-env or --password-file)"
    )


def _print_serving(
    srv: PrivateServer,
    version: str,
    database: str,
    s: InfluxSettings,
    generated: bool | None,
    detach: bool,
    as_json: bool,
) -> None:
    auth = s.username is not None
    if as_json:
        emit_json(
            {
                "url": srv.url,
                "version": version,
                "database": database,
                "auth": auth,
                "username": s.username,
                "password_file": str(s.password_file) if s.password_file else None,
                "password_env": s.password_env,
                "password_generated": generated,
                "pid": srv.pid,
                "data_dir": str(srv.data_dir),
                "log": str(srv.log_path),
            }
        )
        sys.stdout.flush()
        return
    how = f"`rig influx stop --data-dir {srv.data_dir}`" if detach else "Ctrl-C"
    console.print(
        f"InfluxDB {escape(version)} at [bold]{srv.url}[/] (database {escape(database)}, "
        f"pid {srv.pid})\n" + escape(f"data {srv.data_dir}, log {srv.log_path}; {how} stops it")
    )
    if not auth:
        console.print(
            "[bold red]auth off (--no-auth):[/] any local process and any web page open on "
            "this host can read, write and drop this data"
        )
        return
    if s.password_file:
        new = {True: " (new)", False: " (reused)", None: ""}[generated]
        where = f"password in {s.password_file}{new}"
        key = f'password_file = "{s.password_file}"'
    else:
        where = f"password from ${s.password_env}"
        key = f'password_env = "{s.password_env}"'
    text = f"auth on: user {s.username}, {where}; in a rig config: [influx] username = "
    console.print(escape(f'{text}"{s.username}", {key}'), highlight=False, soft_wrap=True)


@influx.command()
@data_dir_option
@json_option
def stop(data_dir: Path, as_json: bool) -> None:
    """Stop the detached private server of --data-dir (by its PID)."""
    pid = stop_detached(data_dir)
    if as_json:
        emit_json({"stopped": pid is not None, "pid": pid})
    elif pid is None:
        console.print(f"no private server running for {escape(str(data_dir))}")
    else:
        console.print(f"stopped influxd (pid {pid})")


@influx.command()
@click.argument("targets", nargs=-1, required=True, type=click.Path(path_type=Path))
@influx_config_option
@json_option
def push(targets: tuple[Path, ...], config_path: Path, as_json: bool) -> None:
    """Backfill reports from artifact folders (run folders or a results folder).

    Idempotent: a boot written twice is overwritten, never doubled.
    """
    settings, _ = _load(config_path, as_json)
    files = report_files(targets)  # an ArtifactError: exit 2 (json_option)
    res = push_reports(files, settings)
    if as_json:
        emit_json(asdict(res))
    else:
        url = escape(settings.url)
        console.print(f"pushed {res.reports} report(s), {res.points} points to {url}")
        _print_problems("not written", res.failed, res.error)
    # InfluxDB failing is the sink's failure (3); reports it cannot take are bad input (2).
    raise SystemExit(EXIT_RIG_FAILED if res.error else EXIT_INPUT if res.failed else EXIT_OK)


@influx.command()
@influx_config_option
@json_option
def replay(config_path: Path, as_json: bool) -> None:
    """Send the spooled boots (results/.influx-spool) and remove the acknowledged ones."""
    settings, cfg = _load(config_path, as_json)
    spool = Spool(spool_dir(cfg.results_dir))
    with Client(settings) as client:  # an InfluxError: exit 3 (json_option)
        res = replay_spool(client, spool, settings.batch_points)
    if as_json:
        emit_json(asdict(res))
    else:
        if res.busy:
            console.print("another process is replaying the spool right now")
        console.print(
            f"replayed {res.reports} boot(s), {res.points} points; {res.left} left in "
            f"{escape(str(spool.dir))}"
        )
        _print_problems("rejected", res.rejected, res.error)
    # Boots left in the spool: the sink did not take them (3).
    raise SystemExit(EXIT_OK if res.left == 0 and not res.error else EXIT_RIG_FAILED)


def _print_problems(label: str, files: list[dict[str, Any]], error: str | None) -> None:
    """The reports the server did not take, and why; then its error, if it failed."""
    for f in files:
        what = escape(f"{f['file']}: {bounded(str(f['reason']))}")
        console.print(f"[red]{label}[/] {what}", highlight=False)
    if error:
        console.print(f"[bold red]error:[/] {escape(bounded(error))}", highlight=False)


def _status_table(st: dict[str, Any]) -> Table:
    t = Table(title="InfluxDB sink", title_justify="left", show_header=False)
    t.add_column("what")
    t.add_column("value")
    reach = f"[green]up[/] ({st['version']})" if st["reachable"] else "[red]unreachable[/]"
    t.add_row("server", f"{escape(st['url'])}  {reach}")
    db = {True: "exists", False: "[yellow]missing[/] (created on first write)", None: "unknown"}
    t.add_row("database", f"{escape(st['database'])}  {db[st['database_exists']]}")
    if st["boots"] is not None:
        t.add_row("boots stored", str(st["boots"]))
    sp = st["spool"]
    depth = f"{sp['reports']} boot(s), {sp['points']} points"
    t.add_row("spool", f"{depth}  ({escape(str(sp['dir']))})")
    for r in sp["rejected"] + sp["unreadable"]:
        t.add_row("[red]stuck[/]", escape(f"{r['file']}: {bounded(str(r['reason']))}"))
    if st["error"]:
        t.add_row("[red]error[/]", escape(bounded(st["error"])))
    return t


@influx.command()
@influx_config_option
@json_option
def status(config_path: Path, as_json: bool) -> None:
    """Server, database and spool depth."""
    settings, cfg = _load(config_path, as_json)
    st = server_status(settings, cfg.results_dir)
    if as_json:
        emit_json(st)
    else:
        console.print(_status_table(st))
    raise SystemExit(EXIT_OK if st["reachable"] else EXIT_RIG_FAILED)  # unreachable: the sink
