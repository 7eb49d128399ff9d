"""The analysis layer imports nothing from the config, instruments, sinks or the cycle.

Analysis turns artifacts into a report; it must run on any run folder, on a host with
none of the rig's instruments and without the rig configuration (issue 12). The check
follows imports through the rest of `rig` too: a helper that pulls in the config parser
(as `rig.stagespec` did with `rig.tomlcheck`) breaks the layer as surely as a direct
import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RIG = Path(__file__).resolve().parents[1] / "rig"
ANALYSIS = RIG / "analysis"

FORBIDDEN = (
    "rig.analyzer_config",
    "rig.cli",
    "rig.commands",
    "rig.config",
    "rig.cycle",
    "rig.instruments",
    "rig.pipeline",
    "rig.robot",
    "rig.sinks",
    "rig.soak",
    "rig.stageconfig",
    "rig.tomlcheck",
)


def _package(path: Path) -> str:
    parts = path.relative_to(RIG.parent).with_suffix("").parts
    return ".".join(parts if path.name == "__init__.py" else parts[:-1])


def imported(source: str, path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every module `source` (the file at `path`) imports, at any
    depth: imports inside functions count too."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the file's package
                pkg = _package(path).split(".")
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join([*pkg, base] if base else pkg)
            # `from rig import config` imports rig.config: check base.name too.
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return out


def forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def module_files(name: str) -> list[Path]:
    """The files importing `name` runs, from `rig`'s own tree: its packages' __init__
    files and the module itself (`a.b.c` may name an object in module `a.b`)."""
    parts = name.split(".")
    if parts[0] != "rig":
        return []
    out: list[Path] = []
    for n in range(1, len(parts) + 1):
        base = RIG.parent.joinpath(*parts[:n])
        found = [p for p in (base / "__init__.py", base.with_suffix(".py")) if p.is_file()]
        if not found:
            break
        out += found
    return out


#: Pure modules outside rig/analysis, held to the same rule: `rig bisect`'s planner and
#: step decision (its git, build, journal and runner modules do the I/O).
PURE = (RIG / "bisect" / "plan.py", RIG / "bisect" / "decide.py")
#: ...which must not reach the bisect's I/O either.
BISECT_IO = ("rig.bisect.git", "rig.bisect.build", "rig.bisect.journal", "rig.bisect.runner")


def layer_breaches(start: tuple[Path, ...] = ()) -> list[str]:
    """Import chains from rig/analysis (or the files `start`) to a forbidden module, one
    per breach."""
    todo = sorted(start or ANALYSIS.rglob("*.py"))
    assert len(todo) > 20 or start  # the walk found the package
    via: dict[Path, str] = {p: str(p.relative_to(RIG.parent)) for p in todo}
    bad: list[str] = []
    while todo:
        path = todo.pop()
        for line, name in imported(path.read_text(), path):
            chain = f"{via[path]}:{line} -> {name}"
            if forbidden(name) or any(name.startswith(m) for m in BISECT_IO):
                bad.append(chain)
                continue
            for dep in module_files(name):
                if dep not in via:
                    via[dep] = chain
                    todo.append(dep)
    return sorted(bad)


def test_analysis_imports_no_config_instruments_sinks_or_cycle() -> None:
    assert layer_breaches() == []


def test_bisect_planner_and_decision_are_pure() -> None:
    assert all(p.is_file() for p in PURE)
    assert layer_breaches(PURE) == []


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("from rig.config import RigConfig\n", "rig.config.RigConfig"),
        ("import rig.sinks.influx\n", "rig.sinks.influx"),
        ("from rig import cycle\n", "rig.cycle"),
        ("def f():\n    from rig.tomlcheck import Table\n", "rig.tomlcheck.Table"),
        ("from ...instruments import registry\n", "rig.instruments.registry"),
    ],
)
def test_the_check_sees_every_import_form(source: str, name: str) -> None:
    # Where the file lives decides what a relative import means.
    names = [n for _, n in imported(source, ANALYSIS / "parsers" / "probe.py")]
    assert name in names
    assert any(forbidden(n) for n in names)


def test_the_check_follows_imports_through_rig() -> None:
    # rig.stageconfig parses config tables; reaching it through any module is a breach.
    files = module_files("rig.stageconfig.parse_stages")
    assert [p.relative_to(RIG.parent).as_posix() for p in files] == [
        "rig/__init__.py",
        "rig/stageconfig.py",
    ]
