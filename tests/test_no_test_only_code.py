"""The package ships what the rig runs: a public function or class no module of rig/ or of
the benches (bench/ measures the rig with it) uses and no docs page offers as API is there
for the tests alone, and belongs in tests/."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_public_definition_is_used_or_documented() -> None:
    defined: dict[str, Path] = {}
    used: set[str] = set()
    for path in sorted([*(REPO / "rig").rglob("*.py"), *(REPO / "bench").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body if path.is_relative_to(REPO / "rig") else ():
            # A decorated definition is registered (a click command, a driver) and so used.
            if (
                isinstance(node, ast.FunctionDef | ast.ClassDef)
                and not node.name.startswith("_")
                and not node.decorator_list
            ):
                defined[node.name] = path.relative_to(REPO)
        for n in ast.walk(tree):
            if isinstance(n, ast.Name):
                used.add(n.id)
            elif isinstance(n, ast.Attribute):
                used.add(n.attr)
            elif isinstance(n, ast.alias):
                used.add(n.name.rsplit(".", 1)[-1])
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    docs = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    unused = {name: str(path) for name, path in defined.items() if name not in used}
    assert not {n: p for n, p in unused.items() if f"{n}(" not in docs and f"`{n}`" not in docs}
