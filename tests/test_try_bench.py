"""bench/try.py's own logic: the jittering copy of the knobs board (every stage with the
sigma asked for, a board with a sigma of its own refused) and a truth inside or outside
its interval."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from simboard.knob_truth import durations
from simboard.timeline import load
from tests.e2e import REPO


def _bench() -> ModuleType:
    # `try` is a keyword: the bench is loaded from its file, as `python bench/try.py` runs it
    spec = importlib.util.spec_from_file_location("bench_try", REPO / "bench" / "try.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_jittering_board_is_the_knobs_board_with_a_sigma(tmp_path: Path) -> None:
    bench = _bench()
    board = bench.jittering_board(tmp_path / "j.toml", 0.01)
    jitter, plain = load(board), load(bench.BOARD)
    assert [s.sigma for s in plain.stages] == [0.0] * len(plain.stages)
    assert [s.sigma for s in jitter.stages] == [0.01] * len(plain.stages)
    assert durations(jitter) == durations(plain)  # the same nominal boot, so the same truths
    with pytest.raises(SystemExit, match="already has a sigma"):
        bench.jittering_board(tmp_path / "again.toml", 0.01, board)


@pytest.mark.parametrize(("truth", "inside"), [(1.0, True), (0.99, True), (0.98, False),
                                               (1.03, False)])  # fmt: skip
def test_a_truth_is_inside_its_interval_or_not(truth: float, inside: bool) -> None:
    row = {"ci_s": [0.99, 1.02], "truth_s": truth}
    assert _bench().inside(row) is inside
    assert _bench().inside({"ci_s": [None, None], "truth_s": truth}) is False
