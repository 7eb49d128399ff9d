"""Helpers every subcommand shares: `--json` output, error reporting, exit codes. Every
error that ends a command goes through `fail` (from `json_option`, or `rig.cli.entry`)."""

from __future__ import annotations

import functools
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from rig.artifacts.leftovers import recover_results
from rig.errors import (
    EXIT_BOARD_FAILED,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_RIG_FAILED,
    EXIT_SIGINT,
    ArtifactError,
    RigError,
    bounded,
    exit_code,
    kind,
)
from rig.names import DEFAULT_CONFIG
from rig.outcomes import RIG_FAILED, Outcome

F = TypeVar("F", bound=Callable[..., Any])

console = Console()
err_console = Console(stderr=True)


#: Set to 1 to see the traceback of an internal error (a bug) instead of one line.
DEBUG_ENV = "BOOTRIG_DEBUG"


def config_option(
    help: str = "Rig configuration.", default: Path | None = DEFAULT_CONFIG
) -> Callable[[F], F]:
    """`--config PATH` (`config_path`), the same option on every command that reads one."""
    return click.option(
        "--config",
        "config_path",
        type=click.Path(path_type=Path),
        default=default,
        show_default=default is not None,
        help=help,
    )


def fmt_ms(v: float | None, sign: bool = False, decimals: int = 2) -> str:
    """Seconds as milliseconds, to 10 µs unless told, for a table ("-" for none)."""
    if v is None:
        return "-"
    return f"{v * 1e3:+.{decimals}f}" if sign else f"{v * 1e3:.{decimals}f}"


def fmt_p(v: float | None) -> str:
    """A p-value: three decimals, or two significant digits below 0.001."""
    return "-" if v is None else (f"{v:.2g}" if v < 0.001 else f"{v:.3f}")


def spinner(as_json: bool) -> Progress:
    """The one-line progress of a command that boots the target (hidden with --json)."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=as_json,
    )


def json_option(f: F) -> F:
    """`--json`, and the error contract of a command that has it: any exception raised
    inside ends the command through `fail`."""

    @functools.wraps(f)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click's own: usage errors (exit 2), explicit exits, Ctrl-C
        except Exception as e:  # the one place an error becomes an exit code
            fail(e, bool(kwargs.get("as_json")))

    return click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON object instead of tables."
    )(guarded)  # type: ignore[return-value]


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


def describe(error: BaseException) -> str:
    """One line for the user. A `RigError` or an OSError says what and where itself; any
    other exception is a bug: say so and name its type, with no traceback."""
    text = str(error) or type(error).__name__
    if isinstance(error, RigError | OSError):
        return text
    hint = "" if os.environ.get(DEBUG_ENV) else f" (set {DEBUG_ENV}=1 for the traceback)"
    return f"internal error: {type(error).__name__}: {text}{hint}"


def fail(error: str | BaseException, as_json: bool, code: int | None = None) -> NoReturn:
    """Report an error (as JSON with --json) and exit: with `code` if given, else 2 for a
    message (bad input) and the kind's code for an exception."""
    if isinstance(error, BaseException):
        if not isinstance(error, RigError) and os.environ.get(DEBUG_ENV):
            traceback.print_exception(error, file=sys.stderr)
        message, code = describe(error), exit_code(error) if code is None else code
        what = kind(error) if isinstance(error, RigError) else "rig"
    else:
        code = EXIT_INPUT if code is None else code
        message, what = error, "input" if code == EXIT_INPUT else "rig"
    message = bounded(message)
    if as_json:
        emit_json({"error": message, "kind": what, "exit_code": code})
    else:
        # soft_wrap: no line breaks of rich's own inside a path or a quoted value.
        err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise SystemExit(code)


def outcome_exit_code(outcome: str, *, measured_now: bool, interrupted: int = EXIT_SIGINT) -> int:
    """The exit code of a run's outcome, for `rig run` (`measured_now`) and `rig analyze`
    of a stored run alike (docs/exit-codes.md, "A run's outcome")."""
    if outcome == Outcome.OK:
        return EXIT_OK
    if outcome == Outcome.INTERRUPTED:
        return interrupted
    if outcome in RIG_FAILED:
        return EXIT_RIG_FAILED
    if outcome == Outcome.INVALID_ARTIFACTS:
        return EXIT_RIG_FAILED if measured_now else EXIT_INPUT
    return EXIT_BOARD_FAILED


def recover_leftovers(results_dir: Path, as_json: bool) -> list[str]:
    """Convert or remove raw captures that killed runs left under `results_dir`, saying
    so; a capture is never left to fill the disk."""
    notes = []
    try:
        found = recover_results(results_dir) if results_dir.is_dir() else []
    except (OSError, ArtifactError) as e:
        found, notes = [], [f"{results_dir}: leftover raw captures not recovered: {e}"]
    notes += [f.describe() for f in found]
    if not as_json:
        for n in notes:
            err_console.print(f"[yellow]note:[/] {escape(n)}", highlight=False)
    return notes
