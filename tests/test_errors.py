"""The error hierarchy and the exit codes it maps to (rig.errors, docs/exit-codes.md)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from rig import errors
from rig.commands.common import outcome_exit_code
from rig.errors import (
    ArtifactError,
    ConfigError,
    InputError,
    InstrumentError,
    RigError,
    SinkError,
    bounded,
    exit_code,
    kind,
)
from rig.outcomes import Outcome

REPO = Path(__file__).resolve().parents[1]

#: Every error class the rig had before the hierarchy, where it lives, its kind, and the
#: builtin it used to be (older `except ValueError` code must still catch it).
CLASSES = [
    ("rig.sinks.influx.client", "InfluxError", SinkError, RuntimeError),
    ("simboard.faults", "FaultSpecError", ConfigError, ValueError),
]


@pytest.mark.parametrize(("module", "name", "kind_cls", "builtin"), CLASSES)
def test_every_error_class_has_a_kind_and_keeps_its_builtin(
    module: str, name: str, kind_cls: type[RigError], builtin: type[Exception]
) -> None:
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, kind_cls) and issubclass(cls, builtin)


def test_no_error_class_outside_the_hierarchy() -> None:
    """A new `class ...Error(ValueError)` would escape the exit codes: list them all."""
    known = {name for _, name, _, _ in CLASSES} | {
        "RigError",
        "InputError",
        "ConfigError",
        "ArtifactError",
        "InstrumentError",
        "SinkError",
        "ScpiError",  # the simulated instrument's protocol error, never leaves the simulator
    }
    found = set()
    for path in (REPO / "rig").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
                found.add(node.name)
    assert found <= known, f"error classes outside rig.errors' table: {sorted(found - known)}"


@pytest.mark.parametrize(
    ("error", "code", "name"),
    [
        (InputError("x"), 2, "input"),
        (ConfigError("x"), 2, "config"),
        (ArtifactError("x"), 2, "artifact"),
        (InstrumentError("x"), 3, "instrument"),
        (SinkError("x"), 3, "sink"),
        (RigError("x"), 3, "rig"),
        (OSError("disk full"), 3, "rig"),
        (KeyError("bug"), 3, "rig"),
    ],
)
def test_exit_code_by_kind(error: BaseException, code: int, name: str) -> None:
    assert (exit_code(error), kind(error)) == (code, name)


@pytest.mark.parametrize(
    ("outcome", "measured_now", "code"),
    [
        (Outcome.OK, False, 0),
        ("hang_in_kernel", False, 1),
        ("panic", True, 1),
        ("no_power_edge", False, 1),
        ("missing_marker", False, 1),
        ("console_lost", False, 1),
        (Outcome.RIG_ERROR, False, 3),
        ("analyzer_error", True, 3),
        (Outcome.INVALID_ARTIFACTS, False, 2),  # a stored run's artifacts: bad input
        (Outcome.INVALID_ARTIFACTS, True, 3),  # artifacts the rig has just written: the rig's fault
        (Outcome.INTERRUPTED, False, 130),
    ],
)
def test_outcome_exit_code(outcome: str, measured_now: bool, code: int) -> None:
    assert outcome_exit_code(outcome, measured_now=measured_now) == code


def test_interrupted_run_keeps_the_signal_code() -> None:
    assert outcome_exit_code(Outcome.INTERRUPTED, measured_now=True, interrupted=143) == 143


def test_bounded_message() -> None:
    assert bounded("short") == "short"
    assert bounded("x" * errors.MAX_MESSAGE) == "x" * errors.MAX_MESSAGE
    cut = bounded("y" * 10_000)
    assert cut == "y" * errors.MAX_MESSAGE + f"… ({10_000 - errors.MAX_MESSAGE} more characters)"


def test_errors_module_imports_nothing() -> None:
    """Analysis must stay pure: the errors module it may import brings nothing along."""
    tree = ast.parse((REPO / "rig" / "errors.py").read_text(encoding="utf-8"))
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert [getattr(n, "module", None) for n in imports] == ["__future__"]
