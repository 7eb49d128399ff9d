"""Soak statistics, the summary (JSON and HTML) from a journal, durations (budgets:
test_budgets.py, test_soak_budgets.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rig.model.soak import CycleRecord, EndRecord, HeaderRecord, ResumeRecord
from rig.model.summary import Distribution
from rig.sinks.html.soak import render
from rig.soak.journal import SCHEMA, Journal, read_records
from rig.soak.start import parse_duration
from rig.soak.stats import describe, failure_rates
from rig.soak.summary import summarize

STAGES = ["bootloader", "kernel"]


def test_describe_matches_numpy() -> None:
    v = [0.10, 0.12, 0.11, 0.30, 0.105, 0.115]
    d = describe(v)
    assert d.n == 6 and d.min == 0.10 and d.max == 0.30
    for q, p in zip((50, 95, 99), (d.p50, d.p95, d.p99), strict=True):
        assert p == pytest.approx(float(np.percentile(v, q)))
    assert d.stddev == pytest.approx(float(np.std(v, ddof=1)))
    assert describe([]) == Distribution(0) and describe([1.0]).stddev == 0.0


def test_failure_rates() -> None:
    r = failure_rates(["ok"] * 7 + ["panic", "hang_in_kernel", "panic"])
    assert r.cycles == 10 and r.failures == 3 and r.failure_rate == pytest.approx(0.3)
    assert r.rates == {"hang_in_kernel": 0.1, "panic": 0.2}
    assert next(iter(r.counts)) == "ok"


def test_runs_the_rig_or_the_operator_ended_are_not_the_boards_failures() -> None:
    outcomes = ["ok"] * 6 + ["panic"] + ["rig_error", "interrupted", "invalid_artifacts"]
    r = failure_rates([*outcomes, "analyzer_error"])
    assert (r.cycles, r.measured, r.not_measured) == (11, 7, 4)
    assert r.failures == 1 and r.failure_rate == pytest.approx(1 / 7)
    assert r.rates == {"panic": pytest.approx(1 / 7)}
    assert r.counts["rig_error"] == 1  # kept and shown
    assert failure_rates(["interrupted"]).failure_rate == 0.0


def _cycle(n: int, outcome: str, kernel: float | None, session: int = 1) -> CycleRecord:
    return CycleRecord(
        cycle=n,
        run_id=f"20250101T0000{n:02d}Z-abcdef",
        session=session,
        outcome=outcome,
        power_to_ui_s=0.3 if outcome == "ok" else None,
        stages={"bootloader": 0.05, "kernel": kernel},
        influx="written" if n % 2 else "spooled",
        overhead_s=0.05,
        rss_kb=40_000 + n,
        elapsed_s=float(n),
    )


def test_summary_and_html_from_a_journal(tmp_path: Path) -> None:
    folder = tmp_path / "soak"
    head = HeaderRecord(schema=SCHEMA, soak_id="s1", stages=STAGES, board="b")
    with Journal.create(folder, head) as j:
        for i in range(1, 9):
            j.append(_cycle(i, "ok", 0.12 + i / 1000))
        j.append(_cycle(9, "hang_in_kernel", None))
        j.append(ResumeRecord(session=2))
        j.append(_cycle(10, "ok", 0.2, session=2))
        j.append(EndRecord(reason="completed", elapsed_s=11.0))
    records, _ = read_records(folder / "journal.jsonl")
    summary = summarize(folder, records)
    s = summary.to_json()
    assert s["status"] == "completed" and s["sessions"] == 2 and s["elapsed_s"] == 11.0
    assert s["cycles"] == {
        "run": 10,
        "classified": 10,
        "recovered": 0,
        "interrupted": 0,
        "unjournaled": 0,
    }
    assert s["outcomes"] == {"ok": 9, "hang_in_kernel": 1}
    assert s["failure_rate"] == pytest.approx(0.1)
    kernel = next(st for st in s["stages"] if st["name"] == "kernel")
    assert kernel["n"] == 9 and kernel["max"] == 0.2  # ok boots only
    assert s["influx"] == {"spooled": 5, "written": 5}
    assert s["rss"]["growth_kb"] == 9 - 1  # session 1: cycles 1..9
    page = render(summary, [r for r in records if isinstance(r, CycleRecord)])
    assert page.count("<svg") == len(STAGES) + 1 and "hang_in_kernel" in page
    assert "20250101T000009Z-abcdef/console.log" in page


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90.0), ("90s", 90.0), ("30m", 1800.0), ("8h", 28800.0), ("1h30m", 5400.0)],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "soon", "5 parsecs", "-3s"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected e\.g\. 90s"):
        parse_duration(text)


def test_parse_duration_with_zero_allowed() -> None:
    """`rig prune --older-than` takes 0 (in any unit) as well as the forms `rig soak` takes."""
    for text in ("0", "00", "0.", "0.0", "0ms", " 0 S ", "0\td", "0h0m"):
        assert parse_duration(text, zero=True) == 0.0, text
    assert parse_duration("1h30m", zero=True) == 5400.0
    assert parse_duration("5.") == 5.0
    for text in ("", "soon", "-3s", "0x"):
        with pytest.raises(ValueError, match=r"expected e\.g\. 90s"):
            parse_duration(text, zero=True)
