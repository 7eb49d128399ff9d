"""Every name is imported from the module that defines it. `from a import X` works while
`a` imports X itself, but then X has two homes, and moving it breaks callers that never
meant to depend on `a`. Two packages are homes by design: rig.model and rig.robot, whose
markers are their public API."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
API_PACKAGES = {"rig.model", "rig.robot"}


def _source(module: str) -> Path | None:
    base = REPO.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imported_only(path: Path) -> set[str]:
    """Names `path` imports at its top level and does not define."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined, imported = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom | ast.Import):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return imported - defined


def test_every_name_is_imported_from_its_home() -> None:
    cache: dict[str, set[str]] = {}
    wrong = []
    for root in ("rig", "simboard", "tests", "bench"):
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ImportFrom) or node.module in API_PACKAGES:
                    continue
                source = _source(node.module or "") if node.level == 0 else None
                if source is None or not str(node.module).startswith(("rig", "simboard")):
                    continue
                if node.module not in cache:
                    cache[node.module] = _imported_only(source)
                wrong += [
                    f"{path.relative_to(REPO)}:{node.lineno}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name in cache[node.module]
                    and _source(f"{node.module}.{a.name}") is None  # not a submodule
                ]
    assert not wrong, "\n".join(wrong)
