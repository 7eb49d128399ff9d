"""`rig soak --places a,b,c`: the command side (checks, progress, the table at the end);
the children and their exit codes are rig.soak.places."""

from __future__ import annotations

from pathlib import Path

from rich.live import Live
from rich.markup import escape
from rich.table import Table

from rig.commands.common import console, emit_json, fmt_ms
from rig.config.target import place_override
from rig.errors import InputError
from rig.instruments.drivers import load_config
from rig.names import DEFAULT_CONFIG
from rig.soak.budgets import soak_budgets
from rig.soak.places import PlaceSoak, parse_places, run_places
from rig.soak.start import new_soak_id


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
    """Run the soaks; returns the exit code (the worst place's)."""
    if not places:
        raise InputError("--place-config needs --places")
    configs = parse_places(places, place_configs, config_path or DEFAULT_CONFIG)
    # Every config (and its budgets) is checked before any board is touched (a typo fails
    # all at once); its results_dir is where that place's journal will be, for the
    # progress display.
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
