"""`rig soak`: measured power cycles, many of them, each journaled and accounted for."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from rig.commands.common import (
    config_option,
    console,
    emit_json,
    err_console,
    fail,
    fmt_ms,
    json_option,
    recover_leftovers,
)
from rig.config.target import place_override
from rig.errors import InputError
from rig.instruments.drivers import load_config
from rig.model.summary import Limits, SoakBudgets
from rig.names import DEFAULT_CONFIG, JOURNAL, TOTAL
from rig.soak.journal import read_header

if TYPE_CHECKING:
    from rig.soak.places import PlaceSoak
    from rig.soak.run import SoakResult

EPILOG = """\b
Exit codes: 0 completed, failure rate within --max-failure-rate and within the
percentile budgets; 1 completed with more failures, or over a percentile budget;
2 bad usage, config, budgets or journal; 3 the rig could not run, or gave up
after [soak] max_consecutive_rig_errors rig errors in a row; 130/143 stopped by Ctrl-C
or SIGTERM (target powered off, journal closed: continue with --resume ID).
"""


def print_summary(result: SoakResult) -> None:
    s = result.summary
    title = escape(f"soak {s.soak_id}: {s.board} ({s.variant})")
    t = Table(title=title, title_justify="left")
    stats = ("min", "p50", "p95", "p99", "max", "stddev")
    t.add_column("stage")
    t.add_column("n", justify="right")
    for col in stats:
        t.add_column(f"{col} (ms)", justify="right")
    for name, st in [*((x.name, x) for x in s.stages), (TOTAL, s.power_to_ui)]:
        t.add_row(escape(name), str(st.n), *(fmt_ms(getattr(st, k), decimals=3) for k in stats))
    console.print(t)
    c = s.cycles
    rates = ", ".join(f"{k} {v:.2%}" for k, v in s.failure_rates.items()) or "none"
    console.print(
        f"{c.run} cycles ({c.recovered} recovered, {c.interrupted} interrupted) "
        f"in {s.sessions} session(s); status {s.status}; "
        f"failure rate {s.failure_rate:.2%} ({rates})"
    )
    if s.not_cold:
        console.print(
            f"[yellow]{s.not_cold} ok boot(s) were not a true cold boot: left out of the "
            "statistics (docs/cold-boot.md)[/]"
        )
    if s.influx:
        console.print(escape("influx: " + ", ".join(f"{k} {v}" for k, v in s.influx.items())))
    if s.budgets is not None:
        print_budgets(s.budgets)
    console.print(escape(f"journal {result.journal}\nsummary {result.html}"))


def print_budgets(b: SoakBudgets) -> None:
    """The percentile budgets of the board and variant, each with its verdict."""
    tables = f"[boards.{b.board}]" + (
        f" and [boards.{b.board}.variants.{b.variant}]" if b.variant_table else ""
    )
    where = escape(f"{b.file} {tables}")
    if not b.checks:
        console.print(f"no percentile budgets for {escape(b.board)} in {where}")
        return
    t = Table(title=f"percentile budgets from {where}", title_justify="left")
    for col in ("budget", "n", "value (ms)", "budget (ms)", "verdict"):
        t.add_column(col, justify="left" if col in ("budget", "verdict") else "right")
    for c in b.checks:
        verdict = "[green]within[/]" if c.within else "[red]over[/]"
        t.add_row(escape(f"p{c.percentile:g} {c.what}"), str(c.n), fmt_ms(c.value_s, decimals=3),
                  fmt_ms(c.budget_s, decimals=3), verdict)  # fmt: skip
    console.print(t)


def soak_places(
    config_path: Path | None,
    places: str,
    place_configs: tuple[str, ...],
    soak_id: str | None,
    cycles: int | None,
    duration: str | None,
    max_failure_rate: float | None,
    budgets: Path | None,
    as_json: bool,
) -> int:
    """`rig soak --places a,b,c` (the children and their exit codes: rig.soak.places);
    returns the exit code (the worst place's)."""
    from rig.soak.budgets import soak_budgets
    from rig.soak.places import parse_places, run_places
    from rig.soak.start import new_soak_id

    if not places:
        raise InputError("--place-config needs --places")
    configs = parse_places(places, place_configs, config_path or DEFAULT_CONFIG)
    # Every config and its budgets are checked before any board is touched: a typo fails
    # all at once. Each results_dir is where that place's journal will be, for the display.
    loaded = {p: load_config(path, overrides=place_override(p)) for p, path in configs.items()}
    for cfg in loaded.values():
        soak_budgets(cfg, budgets)
    results = {place: cfg.results_dir for place, cfg in loaded.items()}
    limits: list[str] = []
    if cycles:
        limits += ["--cycles", str(cycles)]
    if duration:
        limits += ["--duration", duration]
    if max_failure_rate is not None:
        limits += ["--max-failure-rate", str(max_failure_rate)]
    if budgets is not None:  # each child judges its own board and variant by it
        limits += ["--budgets", str(budgets.resolve())]

    sid = soak_id or new_soak_id()
    if as_json:
        result = run_places(configs, sid, limits, results)
        emit_json(result.as_json())
        return result.exit_code
    with Live(_table([]), console=console, refresh_per_second=2, transient=True) as live:
        result = run_places(configs, sid, limits, results, lambda ps: live.update(_table(ps)))
    console.print(_table(result.places))
    for p in result.places:
        if p.error:
            console.print(escape(f"{p.place}: {p.error}"), style="red", highlight=False)
        elif p.summary and p.summary.folder:
            console.print(escape(f"{p.place}: {p.summary.folder}"), highlight=False)
    console.print(f"soak {escape(sid)}: {len(result.places)} places, exit {result.exit_code}")
    return result.exit_code


def _table(places: list[PlaceSoak]) -> Table:
    t = Table(title="soak per place", title_justify="left")
    for col in ("place", "soak id", "cycles", "failure rate", "power-to-UI p50 (ms)", "exit"):
        left = col in ("place", "soak id")
        t.add_column(col, justify="left" if left else "right", overflow="fold")
    for p in places:
        s = p.summary
        t.add_row(
            escape(p.place),
            escape(p.soak_id),
            str(s.cycles.run if s else p.cycles_done()),
            f"{s.failure_rate:.2%}" if s else "-",
            fmt_ms(s.power_to_ui.p50 if s else None),
            "running" if p.exit_code is None else str(p.exit_code),
        )
    return t


@click.command(epilog=EPILOG)
@config_option(
    "Rig configuration (default config/rig.toml; on --resume, the soak's own, if unchanged).",
    default=None,
)
@click.option(
    "--board",
    type=click.Path(path_type=Path),
    help="Simulated board profile to boot instead of the config's.",
)
@click.option("--cycles", type=click.IntRange(min=1), help="Stop after N cycles.")
@click.option("--duration", metavar="TIME", help="Stop after this long, e.g. 90s, 30m, 8h.")
@click.option("--resume", "resume_ref", metavar="ID", help="Continue the soak ID (or folder).")
@click.option("--id", "soak_id", metavar="ID", help="Name the new soak (default soak-<time>).")
@click.option(
    "--max-failure-rate",
    type=click.FloatRange(0.0, 1.0),
    help="Failure rate (0..1) above which the exit code is 1 (default [soak] or 0).",
)
@click.option(
    "--budgets",
    "budgets_path",
    type=click.Path(path_type=Path),
    help="Budgets file whose percentile budgets the soak is judged by (default: the "
    "config's [board] budgets, else budgets.toml next to it if it has the board).",
)
@click.option(
    "--place",
    metavar="NAME",
    help="Soak the board of this labgrid place ([target] place); kept on --resume.",
)
@click.option(
    "--places",
    metavar="A,B,...",
    help="One soak per labgrid place, all at once (soak ids <id>-<place>).",
)
@click.option(
    "--place-config",
    "place_configs",
    metavar="NAME=CONFIG",
    multiple=True,
    help="With --places: this place's rig configuration instead of --config.",
)
@json_option
def soak(
    config_path: Path | None,
    board: Path | None,
    cycles: int | None,
    duration: str | None,
    resume_ref: str | None,
    soak_id: str | None,
    max_failure_rate: float | None,
    budgets_path: Path | None,
    place: str | None,
    places: str | None,
    place_configs: tuple[str, ...],
    as_json: bool,
) -> None:
    """Power-cycle the target again and again; journal, summarise, report every cycle."""
    # Here, not at the top: `rig soak --help` needs no numpy (rig/commands/group.py).
    from rig.soak.budgets import soak_budgets
    from rig.soak.resume import locate, original_config
    from rig.soak.run import run_soak
    from rig.soak.start import check_id, parse_duration

    # A RigError raised here exits with its kind's code (json_option).
    duration_s = parse_duration(duration) if duration else None
    if soak_id:
        check_id(soak_id)
    if places is not None or place_configs:
        if place or resume_ref or board:
            fail("--places starts one soak per place: without --place, --resume, --board",
                 as_json)  # fmt: skip
        many = soak_places(config_path, places or "", place_configs, soak_id, cycles,
                           duration, max_failure_rate, budgets_path, as_json)  # fmt: skip
        raise SystemExit(many)
    sets = place_override(place or None)
    resume: Path | None = None
    if resume_ref:
        if soak_id:
            fail("--id names a new soak; --resume continues one: give only one", as_json)
        resume = locate(resume_ref, config_path)
        head = read_header(resume / JOURNAL)
        cfg = original_config(resume, head, config_path, board, place)
        board = board or (Path(head.board_profile) if head.board_profile else None)
        if not as_json:
            err_console.print(escape(f"resuming {resume} with {cfg.path}"), highlight=False)
    else:
        cfg = load_config(config_path or DEFAULT_CONFIG, board=board, overrides=sets)
    budgets = soak_budgets(cfg, budgets_path)  # checked before the board is touched
    recover_leftovers(cfg.results_dir, as_json)
    limits = Limits(cycles, duration_s) if cycles or duration_s else None
    result = run_soak(
        cfg,
        limits=limits,
        soak_id=soak_id,
        resume=resume,
        board=board,
        max_failure_rate=max_failure_rate,
        show=not as_json,
        budgets=budgets,
    )
    if as_json:
        emit_json(
            {
                **result.summary.to_json(),
                "reason": result.reason,
                "exit_code": result.exit_code,
                "journal": str(result.journal),
                "html": str(result.html),
            }
        )
    else:
        print_summary(result)
    raise SystemExit(result.exit_code)
