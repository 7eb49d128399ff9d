"""Helpers every subcommand shares: `--json` output and error reporting."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.markup import escape

from rig.artifacts.leftovers import recover_results
from rig.artifacts.rundir import ArtifactError
from rig.artifacts.srzip import CaptureError

F = TypeVar("F", bound=Callable[..., Any])

console = Console()
err_console = Console(stderr=True)


def json_option(f: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON object instead of tables."
    )(f)


def engine_option(f: F) -> F:
    return click.option(
        "--engine",
        type=click.Choice(["fast", "sigrok"]),
        default="fast",
        show_default=True,
        help="Capture scan: numpy (fast) or sigrok-cli with the bootmarkers decoder "
        "(the reference; same results, slower).",
    )(f)


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False) + "\n")


def fail(message: str, as_json: bool, code: int = 2) -> NoReturn:
    """Report an error (as JSON with --json) and exit with `code`."""
    if as_json:
        emit_json({"error": message})
    else:
        err_console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise SystemExit(code)


def recover_leftovers(results_dir: Path, as_json: bool) -> list[str]:
    """Convert or remove raw captures that killed runs left under `results_dir`, saying
    so; a capture is never left to fill the disk."""
    notes = []
    try:
        found = recover_results(results_dir) if results_dir.is_dir() else []
    except (OSError, ArtifactError, CaptureError) as e:
        found, notes = [], [f"{results_dir}: leftover raw captures not recovered: {e}"]
    notes += [f.describe() for f in found]
    if not as_json:
        for n in notes:
            err_console.print(f"[yellow]note:[/] {escape(n)}", highlight=False)
    return notes
