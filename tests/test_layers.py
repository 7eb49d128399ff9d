"""The layers of rig/, stated once and checked on every import.

Data flows instruments (I/O) -> artifacts -> analysis (pure) -> sinks; `model` is the typed
data they hand on. Features that drive the layers (`measure`, `soak`, `compare`, `trend`,
`cost`, `bisect`) each live in one folder, with their pure statistics in a `stats.py`
(or the bisect's `plan.py` and `decide.py`) held to the analysis rule: it must run on any
run folder, on a host with none of the rig's instruments and without the rig
configuration. The check follows imports through the rest of `rig` too: a helper that pulls
in the config parser breaks the layer as surely as a direct import. No import cycle is
left in the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RIG = Path(__file__).resolve().parents[1] / "rig"
ANALYSIS = RIG / "analysis"

#: Pure modules: the analysis and every feature's statistics.
PURE = (
    *sorted(ANALYSIS.rglob("*.py")),
    RIG / "compare" / "stats.py",
    RIG / "trend" / "stats.py",
    RIG / "cost" / "stats.py",
    RIG / "soak" / "stats.py",
    RIG / "bisect" / "plan.py",
    RIG / "bisect" / "decide.py",
    RIG / "trial" / "stats.py",
    RIG / "robot" / "gain.py",
)
#: What a pure module may import from rig besides another pure module.
PURE_MAY_IMPORT = ("rig.__version__", "rig.errors", "rig.model", "rig.names", "rig.outcomes")

#: Each lower layer and the rig modules it may import (besides itself). Everything above
#: (instruments, config, measure, the features, sinks, commands, robot) may use these.
LOWER = {
    "rig.model": ("rig.errors", "rig.names", "rig.outcomes"),
    "rig.artifacts": ("rig.errors", "rig.model", "rig.names", "rig.outcomes", "rig.untrusted"),
    "rig.config": ("rig.errors", "rig.model", "rig.names", "rig.untrusted"),
}
#: Sinks render what the rest produced; they drive no instrument and run no command.
SINKS_MUST_NOT = ("rig.instruments", "rig.measure", "rig.commands", "rig.cli", "rig.robot")


def _package(path: Path) -> str:
    parts = path.relative_to(RIG.parent).with_suffix("").parts
    return ".".join(parts if path.name == "__init__.py" else parts[:-1])


def module_name(path: Path) -> str:
    parts = path.relative_to(RIG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if path.name == "__init__.py" else parts)


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
            # `from rig import steps` imports rig.steps: check base.name too.
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return out


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def module_files(name: str) -> list[Path]:
    """The files importing `name` runs, from our own trees (rig, simboard): its
    packages' __init__ files and the module itself (`a.b.c` may name an object in `a.b`)."""
    parts = name.split(".")
    if parts[0] not in ("rig", "simboard"):
        return []
    out: list[Path] = []
    for n in range(1, len(parts) + 1):
        base = RIG.parent.joinpath(*parts[:n])
        found = [p for p in (base / "__init__.py", base.with_suffix(".py")) if p.is_file()]
        if not found:
            break
        out += found
    return out


PURE_NAMES = tuple(module_name(p) for p in PURE)


def pure_breaches(
    start: tuple[Path, ...] = PURE, probe: tuple[Path, str] | None = None
) -> list[str]:
    """Import chains from a pure module to anything it may not reach, one per breach
    (`probe`: a file that is not on disk, and its text)."""

    def read(path: Path) -> str:
        return probe[1] if probe and path == probe[0] else path.read_text()

    todo = list(start)
    via: dict[Path, str] = {p: str(p.relative_to(RIG.parent)) for p in todo}
    bad: list[str] = []
    while todo:
        path = todo.pop()
        for line, name in imported(read(path), path):
            if not name.startswith("rig.") or name == "rig.__version__":
                continue
            chain = f"{via[path]}:{line} -> {name}"
            if not under(name, (*PURE_MAY_IMPORT, *PURE_NAMES)):
                bad.append(chain)
                continue
            for dep in module_files(name):
                if dep.name == "__init__.py" and dep.parent in (RIG, ANALYSIS):
                    continue  # package markers (kept empty, see test below)
                if dep not in via:
                    via[dep] = chain
                    todo.append(dep)
    return sorted(bad)


def direct_imports(package: Path = RIG) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (names resolved to files)."""
    graph: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        deps: set[str] = set()
        for _, name in imported(path.read_text(), path):
            files = module_files(name)
            if files:
                deps.add(module_name(files[-1]))
        graph[module_name(path)] = deps - {module_name(path)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_pure_modules_import_only_the_model_and_each_other() -> None:
    assert len(PURE) > 20 and all(p.is_file() for p in PURE)
    assert pure_breaches() == []


@pytest.mark.parametrize("layer", sorted(LOWER))
def test_lower_layers_import_only_what_is_below_them(layer: str) -> None:
    folder = RIG.joinpath(*layer.split(".")[1:])
    bad = [
        f"{path.relative_to(RIG.parent)}:{line} -> {name}"
        for path in sorted(folder.rglob("*.py"))
        for line, name in imported(path.read_text(), path)
        if name.startswith("rig.")
        and name != "rig.__version__"
        and not under(name, (layer, *LOWER[layer]))
    ]
    assert bad == []


def test_sinks_drive_no_instrument_and_run_no_command() -> None:
    bad = [
        f"{path.relative_to(RIG.parent)}:{line} -> {name}"
        for path in sorted((RIG / "sinks").rglob("*.py"))
        for line, name in imported(path.read_text(), path)
        if under(name, SINKS_MUST_NOT)
    ]
    assert bad == []


def test_no_import_cycle_in_the_package() -> None:
    assert cycles(direct_imports()) == []


def test_no_import_cycle_in_the_simulated_board() -> None:
    assert cycles(direct_imports(RIG.parent / "simboard")) == []


def test_package_markers_are_empty_of_imports() -> None:
    # Importing rig.config.tomlcheck runs rig/config/__init__.py: a package marker that
    # imported its members would drag them (and their layers) into every import.
    heavy = [
        str(p.relative_to(RIG.parent))
        for p in RIG.rglob("__init__.py")
        # rig.model's marker is its public API; rig.robot's is the Robot import name
        # (`Library    rig.robot.BootRig`), which suites and docs use.
        if p.parent not in (RIG / "model", RIG / "robot")
        and any(n.startswith("rig.") for _, n in imported(p.read_text(), p))
    ]
    assert heavy == []


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("from rig.config.load import RigConfig\n", "rig.config.load.RigConfig"),
        ("import rig.sinks.influx\n", "rig.sinks.influx"),
        ("from rig import steps\n", "rig.steps"),
        ("def f():\n    from rig.config.tomlcheck import Table\n", "rig.config.tomlcheck.Table"),
        ("from ...instruments import registry\n", "rig.instruments.registry"),
    ],
)
def test_the_check_sees_every_import_form(source: str, name: str) -> None:
    # Where the file lives decides what a relative import means.
    probe = ANALYSIS / "parsers" / "probe.py"
    assert name in [n for _, n in imported(source, probe)]
    assert pure_breaches((probe,), (probe, source)) != []


def test_the_check_follows_imports_through_rig() -> None:
    files = module_files("rig.config.stages.parse_stages")
    assert [p.relative_to(RIG.parent).as_posix() for p in files] == [
        "rig/__init__.py",
        "rig/config/__init__.py",
        "rig/config/stages.py",
    ]


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
