"""`rig analyze DIR...`: recompute reports from artifact folders alone.

The exit code is the analyzed run's outcome's, as `rig run` would have given it
(`outcome_exit_code`); with several folders, the largest of theirs."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from rig import names
from rig.artifacts.leftovers import recover_folder
from rig.commands.common import (
    console,
    emit_json,
    engine_option,
    err_console,
    fail,
    json_option,
    outcome_exit_code,
)
from rig.errors import ArtifactError, exit_code
from rig.sinks.terminal import print_report


@click.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--no-write", is_flag=True, help="Do not (re)write report.json.")
@click.option(
    "--map",
    "maps",
    multiple=True,
    metavar="CHANNEL=NAME",
    help="Read a capture channel as a contract name, e.g. --map TX=uart_tx --map 0=power.",
)
@engine_option
@json_option
def analyze(
    folders: tuple[Path, ...], no_write: bool, maps: tuple[str, ...], engine: str, as_json: bool
) -> None:
    """Analyze artifact folders (results/<run-id>/) and write their report.json."""
    # Here, not at the top: `rig analyze --help` needs no numpy (rig/commands/group.py).
    from rig.measure.pipeline import analyze_folder
    from rig.sinks.files import save_report

    rename: dict[str, str] = {}
    for m in maps:
        channel, sep, name = m.partition("=")
        if not sep or not channel or names.canonical_marker(name) not in names.CHANNELS:
            fail(
                f"--map {m!r}: expected CHANNEL=NAME with NAME one of {', '.join(names.CHANNELS)}",
                as_json,
            )
        rename[channel] = names.canonical_marker(name)
    reports = []
    for folder in folders:
        if not no_write:
            try:
                left = recover_folder(Path(folder))
            except (OSError, ArtifactError) as e:
                fail(f"{folder}: leftover raw capture: {e}", as_json, exit_code(e))
            if left is not None and not as_json:
                err_console.print(f"[yellow]note:[/] {escape(left.describe())}", highlight=False)
        # A RigError ends the command by its kind (json_option): an unusable artifact 2.
        report = analyze_folder(folder, write=not no_write, engine=engine, rename=rename)
        if not no_write:
            save_report(folder, report)
        reports.append(report)
        if not as_json:
            print_report(report, console, str(folder))
    if as_json:
        docs = [r.to_json() for r in reports]
        emit_json(docs[0] if len(docs) == 1 else docs)
    raise SystemExit(max(outcome_exit_code(r.outcome, measured_now=False) for r in reports))
