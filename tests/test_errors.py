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

#: The documented kinds (docs/exit-codes.md), each with its parent and the builtin it
#: keeps, so that `except ValueError` / `except RuntimeError` still catch it.
KINDS = [
    (InputError, RigError, ValueError),
    (ConfigError, InputError, ValueError),
    (ArtifactError, InputError, ValueError),
    (InstrumentError, RigError, RuntimeError),
    (SinkError, RigError, RuntimeError),
]

#: Error classes besides the kinds, each because it carries data its callers read, and
#: the one module it lives in.
CARRIERS = {
    # the kind of failure and the HTTP status: whether a retry or another report may help
    "InfluxError": ("rig.sinks.influx.client", SinkError),
    # key, expected, found: the config's error names them in its own file
    "FaultSpecError": ("simboard.faults", ConfigError),
    "SettingError": ("simboard.knobs", ConfigError),  # [sim] kernel_args / uboot_env
}
#: The simulated supply's SCPI protocol error: it never leaves the simulator.
SIMULATOR_ONLY = {"ScpiError"}
ERROR_NAMES = {"RigError", *(k.__name__ for k, _, _ in KINDS), *CARRIERS}


@pytest.mark.parametrize(("cls", "base", "builtin"), KINDS)
def test_every_kind_keeps_its_builtin(
    cls: type[RigError], base: type[RigError], builtin: type[Exception]
) -> None:
    assert issubclass(cls, base) and issubclass(cls, builtin)


@pytest.mark.parametrize("name", sorted(CARRIERS))
def test_carriers_are_of_a_kind(name: str) -> None:
    module, kind_cls = CARRIERS[name]
    assert issubclass(getattr(importlib.import_module(module), name), kind_cls)


def _sources(*roots: str) -> list[Path]:
    return [p for root in roots for p in sorted((REPO / root).rglob("*.py"))]


def test_error_classes_are_the_kinds() -> None:
    """An error is raised as its kind: a class of its own is one more name to import and
    document, and escapes the exit codes if it is not a RigError."""
    found = {}
    for path in _sources("rig", "simboard"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and (
                node.name.endswith("Error")
                or any(isinstance(b, ast.Name) and b.id in ERROR_NAMES for b in node.bases)
            ):
                found[node.name] = str(path.relative_to(REPO))
    allowed = ERROR_NAMES | SIMULATOR_ONLY
    assert set(found) <= allowed, {n: p for n, p in found.items() if n not in allowed}


def test_each_error_has_one_home() -> None:
    """`from rig.config.load import ConfigError` works while load imports it, but then a
    name has several homes and moving a module breaks its callers: import from the home."""
    homes = {name: "rig.errors" for name in ERROR_NAMES} | {
        name: module for name, (module, _) in CARRIERS.items()
    }
    wrong = []
    for path in _sources("rig", "simboard", "tests", "bench"):
        where = path.relative_to(REPO)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                wrong += [
                    f"{where}:{node.lineno}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name in homes and node.module != homes[a.name]
                ]
            elif isinstance(node, ast.Attribute) and node.attr in homes:
                module = node.value.id if isinstance(node.value, ast.Name) else None
                if module not in ("errors", homes[node.attr].rsplit(".", 1)[-1]):
                    wrong.append(f"{where}:{node.lineno}: {module}.{node.attr}")
    assert not wrong, "\n".join(wrong)


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
