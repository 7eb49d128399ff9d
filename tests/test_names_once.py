"""Names the rig's files and tools share are spelled once, in rig.names or rig.errors, and
every other module refers to them: a second spelling is a second place to forget."""

from __future__ import annotations

import ast
from pathlib import Path

from rig import names

REPO = Path(__file__).resolve().parents[1]
#: name -> its value; a string literal with the value anywhere else in rig/ is a copy.
SPELLED_ONCE = {"TOTAL": names.TOTAL, "JOURNAL": names.JOURNAL}
#: The exit codes of a signal, rig.errors.EXIT_SIGINT / EXIT_SIGTERM. rig/cli.py keeps its
#: literal: it imports nothing before the command runs (docs/exit-codes.md).
SIGNAL_CODES = {130, 143}
LITERAL_OK = {Path("rig/errors.py"), Path("rig/cli.py")}


def _code_constants(tree: ast.AST) -> list[ast.Constant]:
    """Constants outside docstrings (a docstring may name the value)."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in docs]


def test_contract_names_are_spelled_once() -> None:
    copies = []
    for path in sorted((REPO / "rig").rglob("*.py")):
        where = path.relative_to(REPO)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for c in _code_constants(tree):
            if where == Path("rig/names.py"):
                continue
            if c.value in SPELLED_ONCE.values():
                copies.append(f"{where}:{c.lineno}: {c.value!r}")
            if type(c.value) is int and c.value in SIGNAL_CODES and where not in LITERAL_OK:
                copies.append(f"{where}:{c.lineno}: {c.value}")
    assert not copies, "\n".join(copies)
