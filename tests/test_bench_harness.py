"""The benches' one harness (bench/harness/result.py): the last line every bench prints,
printed by the harness and by no bench itself."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from bench.harness.result import result, skipped, spread, timed

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_the_result_line_has_figures_reference_ratio_and_target_met(
    capsys: pytest.CaptureFixture[str],
) -> None:
    print("a table for people")
    result("x", boots=3, errors={"gpio": 1.0}, reference={"max": 2}, ratio=0.5, target_met=1)
    last = capsys.readouterr().out.splitlines()[-1]
    line = json.loads(last)
    assert list(line) == ["bench", "boots", "errors", "reference", "ratio", "target_met"]
    assert line["target_met"] is True and line["bench"] == "x"
    skipped("x", "no QEMU images", {"max": 2})
    out = capsys.readouterr()
    assert json.loads(out.out) == {"bench": "x", "skipped": "no QEMU images",
                                   "reference": {"max": 2}, "ratio": None,
                                   "target_met": False}  # fmt: skip
    assert "no QEMU images" in out.err


def test_spread_and_timed() -> None:
    s = spread([i / 1e6 for i in range(101)], "us")  # 0..100 µs
    assert s == pytest.approx({"n": 101, "p50_us": 50, "p99_us": 99, "max_us": 100})
    calls: list[int] = []
    t, last = timed(lambda: calls.append(1) or len(calls), runs=3, warmup=2)
    assert (t.runs, last, len(calls)) == (3, 5, 5)
    assert 0 <= t.min_s <= t.median_s <= t.max_s


def _prints_json(node: ast.AST) -> bool:
    """print(json.dumps(...)): a bench printing a JSON line of its own."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "print"
        and any(
            isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and a.func.attr == "dumps"
            for a in node.args
        )
    )


@pytest.mark.parametrize("bench", sorted(BENCH.glob("*.py")), ids=lambda p: p.stem)
def test_every_bench_ends_with_the_harness_line(bench: Path) -> None:
    tree = ast.parse(bench.read_text(encoding="utf-8"))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "bench.harness.result"
        for alias in node.names
    }
    assert "result" in imported, f"{bench.name}: no result line through the harness"
    assert not [n for n in ast.walk(tree) if _prints_json(n)], f"{bench.name} prints its own"


def test_no_bench_shadows_a_standard_module() -> None:
    # `python bench/X.py` puts bench/ first on sys.path: a bench named like a standard
    # module (bisect.py, random.py) would be imported in its place by every other bench.
    import sys

    names = {p.stem for p in BENCH.glob("*.py")} | {p.name for p in BENCH.iterdir() if p.is_dir()}
    assert len(names) > 5
    assert sorted(names & set(sys.stdlib_module_names)) == []
