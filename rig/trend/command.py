"""`rig trend`: change points in the InfluxDB boot-time history, per board, variant and
stage, each named by the first boot after it (docs/trend.md).

Exit code: 0; with `--fail-on-new` 1 when a regression (slower change point) was found
that the last `--fail-on-new` run had not reported (the nightly gate), else 4 when a
slower candidate could not be confirmed (`inconclusive`; 1 with `--fail-inconclusive`);
2 bad input; 3 InfluxDB failed."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from rig.analysis.choices import DEFAULT_ALPHA, DEFAULT_MIN_SEGMENT, PENALTY_FACTOR
from rig.commands.common import config_option, console, emit_json, err_console, fail, json_option
from rig.compare.command import exit_code, seconds
from rig.config.influx import load_influx_config
from rig.errors import EXIT_OK, InputError
from rig.sinks.influx.changepoints import Mark, replace_marks
from rig.sinks.influx.client import Client
from rig.sinks.influx.select import is_duration
from rig.trend.state import Known, default_path, load, save

if TYPE_CHECKING:
    from rig.sinks.influx.history import Series
    from rig.trend.stats import ChangePoint, Unconfirmed


def utc(ns: int) -> str:
    t = datetime.fromtimestamp(ns // 1_000_000_000, UTC).replace(microsecond=ns % 10**9 // 1000)
    return t.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _at_boot(s: Series, found: ChangePoint | Unconfirmed) -> dict[str, Any]:
    """A change point or candidate with the first boot after it."""
    first = s.boots[found.index]
    doc = {"run_id": first.run_id, "time_utc": utc(first.time_ns), "time_ns": first.time_ns}
    return doc | {"rig": first.rig, **found.to_json()}


def _mark(s: Series, cp: ChangePoint) -> Mark:
    first = s.boots[cp.index]
    return Mark(
        s.board, s.variant, s.stage, first.rig, cp.direction, first.time_ns, first.run_id,
        cp.shift_s, cp.median_before_s, cp.median_after_s, cp.p_value,
    )  # fmt: skip


def _change(d: dict[str, Any]) -> str:
    return (
        f"{d['shift_s'] * 1e3:+.2f} ms ({d['median_before_s'] * 1e3:.2f} -> "
        f"{d['median_after_s'] * 1e3:.2f} ms, p {d['p_value']:.2g}) from boot "
        f"{escape(d['run_id'])} ({d['time_utc'][:19].replace('T', ' ')} UTC)"
    )


def _print(doc: dict[str, Any]) -> None:
    """One line per change point (a table of these columns does not fit 80 columns)."""
    from rig.compare.stats import SLOWER

    for s in doc["series"]:
        name = escape(f"{s['board']}/{s['variant'] or '-'}/{s['stage']}")
        for cp in s["change_points"]:
            style = "bold red" if cp["direction"] == SLOWER else "bold green"
            new = " [bold]NEW[/]" if cp.get("new") else ""
            line = f"{name}: [{style}]{cp['direction']}[/] {_change(cp)}{new}"
            console.print(line, highlight=False, soft_wrap=True)
        for u in s["inconclusive"]:
            line = f"{name}: [yellow]inconclusive[/] {_change(u)}: {escape(u['note'])}"
            console.print(line, highlight=False, soft_wrap=True)
    n = sum(len(s["change_points"]) for s in doc["series"])
    undecided = sum(len(s["inconclusive"]) for s in doc["series"])
    console.print(
        f"{len(doc['series'])} series over the last {doc['since']}, {n} change point(s)"
        + (f", {undecided} inconclusive" if undecided else ""),
        highlight=False,
    )
    for note in doc["notes"]:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    if doc.get("new_regressions") is not None:
        console.print(f"new regressions: {len(doc['new_regressions'])}", highlight=False)


@click.command()
@config_option("Rig config: its [influx] table names the server, its results_dir the state.")
@click.option("--board", default=None, help="Only this board.")
@click.option("--variant", default=None, help="Only this variant.")
@click.option("--stage", default=None, help="Only this stage (or power_to_ui).")
@click.option("--since", default="30d", show_default=True, help="History up to now: 12h, 30d, 8w.")
@click.option(
    "--threshold",
    default="0",
    metavar="TIME",
    show_default=True,
    help="Smallest shift reported (e.g. 5ms).",
)
@click.option(
    "--min-segment",
    type=int,
    default=DEFAULT_MIN_SEGMENT,
    show_default=True,
    help="Fewest boots on each side of a change point.",
)
@click.option(
    "--alpha", type=float, default=DEFAULT_ALPHA, show_default=True, help="Rank test level."
)
@click.option(
    "--penalty",
    type=float,
    default=PENALTY_FACTOR,
    show_default=True,
    help="beta of the PELT penalty beta * noise^2 * ln(n).",
)
@click.option("--mark", is_flag=True, help="Write the change points for Grafana's annotations.")
@click.option(
    "--fail-on-new",
    is_flag=True,
    help="Exit 1 on a regression the last --fail-on-new run did not report (nightly gate).",
)
@click.option(
    "--fail-inconclusive",
    is_flag=True,
    help="With --fail-on-new: exit 1, not 4, on a slower change point the test could not confirm.",
)
@click.option(
    "--state",
    "state_path",
    type=click.Path(path_type=Path),
    default=None,
    help="State of --fail-on-new (default <results_dir>/.trend/last.json).",
)
@click.option(
    "--skip-without-influx",
    is_flag=True,
    help="Exit 0 with a note when the config has no [influx] table (the nightly script).",
)
@json_option
def trend(
    config_path: Path,
    board: str | None,
    variant: str | None,
    stage: str | None,
    since: str,
    threshold: str,
    min_segment: int,
    alpha: float,
    penalty: float,
    mark: bool,
    fail_on_new: bool,
    fail_inconclusive: bool,
    state_path: Path | None,
    skip_without_influx: bool,
    as_json: bool,
) -> None:
    """Find change points in the boot-time history per board, variant and stage."""
    # Here, not at the top: `rig trend --help` needs no numpy, scipy or ruptures.
    from rig.compare.stats import SLOWER, min_boots
    from rig.sinks.influx.history import read_history
    from rig.trend.stats import TrendSettings, detect, is_known

    if not is_duration(since):
        fail(f"--since {since!r}: expected a duration such as 12h, 30d or 8w", as_json)
    try:
        settings = TrendSettings(seconds(threshold, "--threshold"), min_segment, alpha, penalty)
    except ValueError as e:  # an InputError from seconds() is a ValueError too
        fail(str(e), as_json)
    if fail_inconclusive and not fail_on_new:
        fail(
            "--fail-inconclusive changes the exit code of the --fail-on-new gate: give both",
            as_json,
        )
    if not Path(config_path).is_file():
        fail(f"{config_path}: no such rig config (--config)", as_json)
    cfg = load_influx_config(config_path)  # a ConfigError: exit 2 (json_option)
    if cfg.settings is None:
        if skip_without_influx:
            note = f"{config_path} has no [influx] table: no history, nothing to check"
            if as_json:
                emit_json({"skipped": note})
            else:
                console.print(f"note: {escape(note)}", highlight=False)
            raise SystemExit(EXIT_OK)
        fail(f"{config_path} has no [influx] table to read the history from", as_json)
    influx = cfg.settings
    selector = {k: v for k, v in (("board", board), ("variant", variant)) if v is not None}
    selector["since"] = since
    state_file = state_path or default_path(cfg.results_dir)
    known = load(state_file) if fail_on_new else []
    notes: list[str] = []
    reach = min_boots(settings.alpha)
    if settings.min_segment < reach:
        notes.append(
            f"at --alpha {settings.alpha:g} a change point needs at least {reach} boots on each "
            f"side to be confirmed; --min-segment {settings.min_segment} lets PELT propose "
            "shorter segments, whose change points are reported as inconclusive"
        )
    out: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    undecided: list[dict[str, Any]] = []
    found: list[Known] = []
    now = utc(int(datetime.now(UTC).timestamp() * 1e9))
    with Client(influx) as client:  # an InfluxError: exit 3 (json_option)
        history = read_history(client, influx.database, selector, stage)
        if not history:
            raise InputError(
                f"InfluxDB ({influx.database}) has no ok boots for this selection "
                f"({', '.join(f'{k}={v}' for k, v in selector.items())})"
            )
        for s in history:
            where = {"board": s.board, "variant": s.variant, "stage": s.stage}
            res = detect([b.duration_s for b in s.boots], settings)
            times = [b.time_ns for b in s.boots]
            mine = [k.time_ns for k in known if k.key == s.key]
            cps = []
            for cp in res.change_points:
                is_new = None
                if fail_on_new and cp.direction == SLOWER:
                    is_new = not is_known(times, cp.index, settings.min_segment, mine)
                    first = s.boots[cp.index]
                    found.append(Known(*s.key, first.time_ns, first.run_id, cp.shift_s, now))
                doc = _at_boot(s, cp) | ({} if is_new is None else {"new": is_new})
                cps.append(doc)
                if is_new:
                    new.append(where | doc)
            unsure = [_at_boot(s, u) for u in res.inconclusive]
            undecided += [where | u for u in unsure if u["shift_s"] > 0]
            out.append(
                where | {
                    "boots": res.n, "first_utc": utc(times[0]), "last_utc": utc(times[-1]),
                    "noise_s": round(res.noise_s, 9), "penalty": round(res.penalty, 9),
                    "candidates": res.candidates, "change_points": cps, "inconclusive": unsure,
                }
            )  # fmt: skip
            if mark:
                marks = [_mark(s, cp) for cp in res.change_points]
                note = replace_marks(client, influx.database, s.key, (times[0], times[-1]), marks)
                notes += [note] if note else []
    doc: dict[str, Any] = {
        "series": out,
        "since": since,
        "settings": asdict(settings),
        "selection": {"board": board, "variant": variant, "stage": stage},
        "marked": sum(len(s["change_points"]) for s in out) if mark else 0,
        "notes": notes,
        "new_regressions": new if fail_on_new else None,
        "inconclusive": undecided,
        "state": str(state_file) if fail_on_new else None,
    }
    if fail_on_new:
        save(state_file, [*known, *found], {"utc": now, "new_regressions": len(new)})
    if as_json:
        emit_json(doc)
    else:
        _print(doc)
        if fail_on_new and new:
            err_console.print(f"[bold red]{len(new)} new regression(s)[/]", highlight=False)
        elif fail_on_new and undecided:
            err_console.print(
                f"[yellow]{len(undecided)} slower change point(s) the boots cannot confirm yet[/]",
                highlight=False,
            )
    raise SystemExit(exit_code(new, undecided, fail_inconclusive) if fail_on_new else EXIT_OK)
