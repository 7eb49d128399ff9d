"""`rig grafana`: build the dashboards' JSON from code, run their queries without Grafana."""

from __future__ import annotations

import re
import time
from dataclasses import asdict
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from rig.commands.common import config_option, console, emit_json, fail, json_option
from rig.config.influx import load_influx_config
from rig.errors import EXIT_BOARD_FAILED, EXIT_OK, EXIT_RIG_FAILED
from rig.sinks.grafana.generate import DASHBOARDS_DIR, build, load_dashboards
from rig.sinks.grafana.query import QueryResult, TimeRange, run_queries
from rig.sinks.influx.client import Client
from rig.sinks.influx.server import default_settings

dashboards_option = click.option(
    "--dashboards",
    "out_dir",
    type=click.Path(path_type=Path),
    default=DASHBOARDS_DIR,
    show_default=True,
    help="Folder of the generated dashboard JSON.",
)


@click.group()
def grafana() -> None:
    """Grafana dashboards as code (config/grafana/)."""


@grafana.command("build")
@dashboards_option
@click.option(
    "--budgets",
    "budgets_path",
    type=click.Path(path_type=Path),
    help="Budgets per board and variant for the budget lines (default config/budgets.toml "
    "if it exists; without it, no budget lines).",
)
@click.option("--check", is_flag=True, help="Only check the files are current; exit 1 if not.")
@json_option
def build_cmd(out_dir: Path, budgets_path: Path | None, check: bool, as_json: bool) -> None:
    """Generate the dashboards' JSON from rig/sinks/grafana/."""
    res = build(out_dir, budgets_path, check=check)  # a budgets ConfigError: exit 2 (json_option)
    if as_json:
        emit_json(res.as_dict())
    elif check:
        state = "current" if res.current else "[red]stale[/] (run `rig grafana build`)"
        console.print(f"{escape(str(out_dir))}: {state}")
        for name in res.stale + res.extra:
            console.print(f"  {escape(name)}")
    else:
        console.print(f"{escape(str(out_dir))}: {len(res.written)} dashboard(s) written")
    # --check's verdict: 1 when stale, like a budget the dashboards fail (docs/exit-codes.md).
    raise SystemExit(EXIT_OK if res.current else EXIT_BOARD_FAILED)


def _since_ms(text: str) -> int:
    m = re.fullmatch(r"(\d+)([smhd])", text)
    if not m:
        raise click.BadParameter("expected <n><s|m|h|d>, e.g. 7d", param_hint="--since")
    return int(m.group(1)) * {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}[m[2]]


def _table(results: list[QueryResult]) -> Table:
    t = Table(title="dashboard queries", title_justify="left")
    for col in ("dashboard", "panel", "ref", "series", "rows"):
        t.add_column(col, justify="right" if col in ("series", "rows") else "left")
    for r in results:
        rows = sum(len(s.get("values", [])) for s in r.series)
        count = f"[red]{escape(r.error)}[/]" if r.error else str(len(r.series))
        names = (escape(r.dashboard), escape(r.panel), escape(r.ref_id))
        t.add_row(*names, count, "" if r.error else str(rows))
    return t


@grafana.command("query")
@dashboards_option
@config_option(
    "Rig configuration; its [influx] table names the server (default: rig influx serve, "
    "with its generated password in results/.influxdb/admin-password)."
)
@click.option("--since", default="7d", show_default=True, help="Time range up to now.")
@click.option(
    "--var",
    "var_args",
    multiple=True,
    metavar="NAME=VALUE",
    help="Select a variable value (repeat for several); unset variables are All.",
)
@json_option
def query_cmd(
    out_dir: Path, config_path: Path, since: str, var_args: tuple[str, ...], as_json: bool
) -> None:
    """Run every panel, variable and annotation query against InfluxDB, as Grafana would."""
    chosen: dict[str, list[str]] = {}
    for arg in var_args:
        name, sep, value = arg.partition("=")
        if not sep:
            fail(f"--var {arg!r}: expected NAME=VALUE", as_json)
        chosen.setdefault(name, []).append(value)
    cfg = load_influx_config(config_path)  # a ConfigError: exit 2 (json_option)
    settings = cfg.settings or default_settings()  # `rig influx serve`'s
    now = int(time.time() * 1000)
    rng = TimeRange(now - _since_ms(since), now)
    results: list[QueryResult] = []
    # InfluxDB failing ends the command with 3, a query not expanded with 2 (json_option).
    with Client(settings) as client:
        for dash in load_dashboards(out_dir):
            results += run_queries(client, settings.database, dash, chosen, rng)
    if not results:
        fail(f"{out_dir}: no dashboards", as_json)
    if as_json:
        emit_json({"database": settings.database, "results": [asdict(r) for r in results]})
    else:
        console.print(_table(results))
    # A query InfluxDB rejected: the sink failed the dashboards (3).
    raise SystemExit(EXIT_RIG_FAILED if any(r.error for r in results) else EXIT_OK)
