"""`rig prune`: free disk in a results folder without losing a record or the raw
artifacts of a boot that is not provably fine (the rule: docs/disk.md,
`rig.artifacts.prune`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click
from rich.markup import escape

from rig.artifacts.prune import Plan, Window, execute, plan
from rig.commands.common import (
    config_option,
    console,
    emit_json,
    err_console,
    fail,
    json_option,
)
from rig.config.influx import load_influx_config
from rig.errors import EXIT_RIG_FAILED, InputError
from rig.names import DEFAULT_CONFIG


def older_than(text: str) -> float:
    """`30d`, `12h`, `90m`...; `0` (any unit) puts every boot past the age limit."""
    # Here, not at the top: rig.soak.start brings numpy, `rig prune --help` needs none.
    from rig.soak.start import parse_duration

    try:
        return parse_duration(text, zero=True)
    except InputError:
        raise InputError(f"--older-than {text!r}: expected e.g. 30d, 12h, 90m or 0") from None


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _print(p: Plan, dry_run: bool, errors: list[tuple[Path, str]]) -> None:
    verb = "would delete" if dry_run else "deleted"
    failed = {path for path, _ in errors}
    for r in p.removals:
        if r.path not in failed:
            console.print(
                f"{verb} {escape(str(r.path))} ({_size(r.bytes)}, {r.kind})", soft_wrap=True
            )
    for b in p.protected if p.raw else []:
        console.print(f"[yellow]raw kept[/] {escape(str(b.folder))}: {escape(str(b.keep_raw))}")
    for path, why in p.skipped:
        console.print(f"[dim]skipped {escape(str(path))}: {escape(why)}[/]")
    freed = p.bytes - sum(r.bytes for r in p.removals if r.path in failed)
    console.print(
        f"{len(p.boots)} boot(s) in {escape(str(p.results))}: {len(p.boots) - len(p.outside)} "
        f"in the retention window, {len(p.outside)} outside; {len(p.removals)} file(s), "
        f"[bold]{_size(freed)}[/] {'would be freed' if dry_run else 'freed'}"
        + ("" if p.raw else " (derived files only; --raw for raw artifacts)"),
        soft_wrap=True,
    )


@click.command()
@click.option(
    "--results",
    "results_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Results folder (or one soak folder) to prune. Default: the config's results_dir.",
)
@config_option("Rig config whose [rig] results_dir to prune (default config/rig.toml).", None)
@click.option(
    "--older-than",
    "older_than_text",
    default="30d",
    show_default=True,
    help="Boots started longer ago than this are outside the retention window (0: all).",
)
@click.option(
    "--keep-last",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="The N newest boots stay inside the window whatever their age.",
)
@click.option(
    "--raw",
    is_flag=True,
    help="Also delete the raw artifacts of boots outside the window; never those of a "
    "failed, flagged or unreadable boot.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be deleted; delete nothing.")
@json_option
def prune(
    results_dir: Path | None,
    config_path: Path | None,
    older_than_text: str,
    keep_last: int,
    raw: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Delete derived files (report.html, uart.bin) of old boots, and with --raw their raw
    artifacts unless the boot failed or is flagged; report.json and run.json always stay."""
    if results_dir is not None and config_path is not None:
        fail("--results and --config: give one of them", as_json)
    window = Window(older_than(older_than_text), keep_last)
    if results_dir is None:
        results_dir = load_influx_config(config_path or DEFAULT_CONFIG).results_dir
    p = plan(results_dir, window, raw, datetime.now(UTC))
    errors = [] if dry_run else execute(p)
    if as_json:
        doc = p.to_json(dry_run)
        failed = {str(path) for path, _ in errors}
        doc["files"] = [f for f in doc["files"] if f["path"] not in failed]
        doc["bytes_freed"] = sum(f["bytes"] for f in doc["files"])
        doc["errors"] = [{"path": str(path), "error": why} for path, why in errors]
        emit_json(doc)
    else:
        _print(p, dry_run, errors)
        for path, why in errors:
            err_console.print(f"[red]not deleted[/] {escape(str(path))}: {escape(why)}")
    if errors:
        raise SystemExit(EXIT_RIG_FAILED)
