"""Statistics meet real data (issue 22, defect 1): every statistics entry point of the
soak and the Robot library (the analysis': test_degenerate_analysis.py) is driven
through the samples a healthy bench gives as readily as a noisy one (one boot, two, a
stage that measures the same on every boot, durations equal but for float rounding, as
0.1 + 0.2 and 0.3 are) and through what no measurement is (NaN, inf, none). Each must
give the right result or a documented verdict, never an exception that would reach the
user as "internal error"."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from rig.model.budgets import Budgets
from rig.model.codec import dump
from rig.model.report import Report, Stage
from rig.model.soak import CycleRecord, EndRecord, HeaderRecord
from rig.model.summary import Distribution
from rig.robot.boot import Boot
from rig.robot.energy import EnergyBudgets
from rig.robot.statistics import SoakStatistics
from rig.sinks.html.soak import histogram, render
from rig.sinks.influx.soak import soak_lines
from rig.soak.budgets import verdicts
from rig.soak.journal import SCHEMA, Journal, read_records
from rig.soak.progress import SoakDisplay
from rig.soak.stats import describe, percentile
from rig.soak.summary import summarize
from tests.conftest import REPO
from tests.degenerate import ALL, CASES, NOT_FINITE
from tests.e2e import make_config


def _journaled_soak(tmp: Path, rootfs: list[float]) -> tuple[object, list[CycleRecord]]:
    folder = tmp / "soak"
    head = HeaderRecord(
        schema=SCHEMA,
        soak_id="s",
        stages=["kernel", "rootfs_mount"],
        board="b",
        variant="v",
        started_utc="2026-01-01T00:00:00Z",
    )
    with Journal.create(folder, head) as j:
        for i, v in enumerate(rootfs or [None], 1):
            stages = {"kernel": 0.12 + i / 1e4} | ({} if v is None else {"rootfs_mount": v})
            j.append(
                CycleRecord(
                    cycle=i,
                    run_id=f"r{i}",
                    session=1,
                    outcome="ok",
                    power_to_ui_s=0.3,
                    stages=stages,
                    elapsed_s=float(i),
                )
            )
        j.append(EndRecord(reason="completed", elapsed_s=9.0))
    records, _ = read_records(folder / "journal.jsonl")
    return summarize(folder, records), [r for r in records if isinstance(r, CycleRecord)]


def _bars(svg: str) -> list[int]:
    return [int(c) for c in re.findall(r"<title>(\d+)</title></rect>", svg)]


def _xs(svg: str) -> list[float]:
    return [float(x) for x in re.findall(r'<line x1="([-\d.]+)"', svg)]


@pytest.mark.parametrize("values", CASES.values(), ids=CASES.keys())
def test_soak_summary_and_html_of_any_journaled_soak(tmp_path: Path, values: list[float]) -> None:
    summary, cycles = _journaled_soak(tmp_path, values)
    rootfs = next(s for s in summary.stages if s.name == "rootfs_mount")
    assert rootfs.n == len(values)
    assert rootfs.min == min(values) and rootfs.max == max(values)
    assert rootfs.p50 == pytest.approx(float(np.median(values)), abs=1e-15)
    page = render(summary, cycles)
    svgs = re.findall(r"<svg.*?</svg>", page)
    assert len(svgs) == 3  # kernel, rootfs_mount, power_to_ui
    svg = next(s for s in svgs if 'aria-label="rootfs_mount"' in s)
    assert sum(_bars(svg)) == len(values)  # every boot in a bar
    assert len(_xs(svg)) == 3 and all(24 <= x <= 560 - 24 for x in _xs(svg))
    assert "nan" not in page.lower() and "inf" not in page.lower()


def test_a_stage_that_measures_the_same_every_boot_is_one_bar_saying_so(tmp_path: Path) -> None:
    summary, cycles = _journaled_soak(tmp_path, CASES["within rounding"])
    svg = next(s for s in re.findall(r"<svg.*?</svg>", render(summary, cycles)) if "rootfs" in s)
    assert _bars(svg) == [5] and "rootfs_mount (no spread)" in svg
    assert "299.9995 ms" in svg and "300.0005 ms" in svg  # ends that differ: 1 µs apart


def test_histogram_bins_are_no_narrower_than_a_microsecond() -> None:
    # 3 µs of spread: 3 bins, not 30 bins of 100 ns.
    svg = histogram("s", [0.030000, 0.030001, 0.030003], Distribution(n=3))
    assert _bars(svg) == [1, 1, 1]
    svg = histogram("s", [0.1, 0.2, 0.3], Distribution(n=3))
    assert len(_bars(svg)) == 30 and sum(_bars(svg)) == 3


@pytest.mark.parametrize("values", NOT_FINITE.values(), ids=NOT_FINITE.keys())
def test_histogram_leaves_out_what_is_no_number_and_says_so(values: list[float]) -> None:
    finite = [v for v in values if math.isfinite(v)]
    d = Distribution(n=len(finite), p50=math.nan, p95=math.inf, p99=None)
    out = histogram("kernel", values, d)
    if not finite:
        assert out.startswith("<p>kernel: no ok boots measured this stage")
        assert ("not a finite number" in out) == bool(values)
        return
    assert sum(_bars(out)) == len(finite) and "1 not finite, left out" in out
    assert _xs(out) == []  # no line for a percentile that is no number


def test_histogram_of_absurd_but_finite_values_draws() -> None:
    svg = histogram("s", [-1e305, 1e305], Distribution(n=2))
    assert sum(_bars(svg)) == 2


# -- the statistics themselves (rig.soak.stats: soak summary, Robot, budgets) ----------

durations = st.floats(min_value=0.0, max_value=1e4, allow_nan=False, allow_infinity=False)


@st.composite
def boots(draw: st.DrawFn) -> list[float]:
    """Durations as boots give them: spread, all equal, or equal but for rounding."""
    base = draw(durations)
    kind = draw(st.sampled_from(["spread", "equal", "rounding"]))
    n = draw(st.integers(min_value=1, max_value=40))
    if kind == "spread":
        return draw(st.lists(durations, min_size=1, max_size=40))
    if kind == "equal":
        return [base] * n
    ulps = draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    return [float(np.nextafter(base, math.inf if u > 0 else 0.0)) if u else base for u in ulps]


@settings(max_examples=300, deadline=None)
@given(boots(), st.lists(st.sampled_from([math.nan, math.inf, -math.inf]), max_size=3))
def test_describe_and_percentile_are_ordered_and_finite(
    values: list[float], junk: list[float]
) -> None:
    d = describe(values + junk)  # what is no number is left out, as an unmeasured boot
    assert d == describe(values) and d.n == len(values)
    got = [d.min, d.p50, d.p95, d.p99, d.max]
    lo, hi, mean, stddev = d.min, d.max, d.mean, d.stddev
    assert lo is not None and hi is not None and mean is not None and stddev is not None
    assert all(v is not None and math.isfinite(v) for v in [*got, mean, stddev])
    assert got == sorted(got) and lo <= mean <= hi
    assert 0 <= stddev <= hi - lo + 1e-12 * hi  # rounding: about 0
    assert stddev == 0 or len(set(values)) > 1
    for q in (0, 50, 95, 99, 100):
        p = percentile(values + junk, q)
        assert p is not None and lo <= p <= hi


@pytest.mark.parametrize("values", [[], [math.nan], [math.inf, -math.inf]])
def test_no_finite_value_is_no_statistic(values: list[float]) -> None:
    assert describe(values) == Distribution(0) and percentile(values, 95) is None


@pytest.mark.parametrize("values", ALL.values(), ids=ALL.keys())
def test_percentile_budgets_judge_only_numbers(values: list[float]) -> None:
    budgets = Budgets(Path("budgets.toml"), "b", None, percentiles={95.0: {"rootfs_mount": 0.1}})
    check = verdicts(budgets, {"rootfs_mount": values}).checks[0]
    finite = [v for v in values if math.isfinite(v)]
    assert check.n == len(finite)
    if finite:
        assert check.value_s == pytest.approx(float(np.percentile(finite, 95)), abs=1e-15)
        assert check.within == (check.value_s <= 0.1)
    else:  # nothing measured is never within a budget
        assert check.value_s is None and not check.within


@pytest.mark.parametrize("values", ALL.values(), ids=ALL.keys())
def test_the_live_display_shows_any_soak(values: list[float]) -> None:
    records = [
        CycleRecord(
            cycle=i,
            run_id=f"r{i}",
            session=1,
            outcome="ok",
            power_to_ui_s=v,
            stages={"rootfs_mount": v},
        )
        for i, v in enumerate(values, 1)
    ]
    shown = StringIO()
    display = SoakDisplay(Console(file=shown, width=100), ["rootfs_mount"], 5, None, records)
    with display:
        pass
    text = shown.getvalue()
    finite = [v for v in values if math.isfinite(v)]
    row = next(line for line in text.splitlines() if line.startswith("rootfs_mount"))
    assert row.split()[1] == str(len(finite)) and "nan" not in text and "inf" not in text
    assert text.endswith("\n")  # a log file gets whole lines
    if finite:
        assert float(row.split()[2]) == pytest.approx(np.percentile(finite, 50) * 1e3, abs=1e-3)
        assert all(len(cell.split(".")[1]) == 3 for cell in row.split()[2:4])  # to 1 µs


@pytest.mark.parametrize("values", CASES.values(), ids=CASES.keys())
def test_the_soak_point_encodes_any_journaled_soak(tmp_path: Path, values: list[float]) -> None:
    summary, _ = _journaled_soak(tmp_path, values)
    (line,) = soak_lines(summary)
    p50 = re.search(r"rootfs_mount_p50_s=([^,\s]+)", line)
    assert p50 is not None and float(p50.group(1)) == pytest.approx(np.median(values), abs=1e-12)


class _Keywords(SoakStatistics):
    """Robot's statistics keywords over boots measured in this process (whose reports,
    unlike the files, the model never checked)."""

    def __init__(self, values: list[float]) -> None:
        self.boots = [
            Boot(
                Report(
                    outcome="ok",
                    run_id=f"r{i}",
                    power_to_ui_s=v,
                    stages=[Stage("rootfs_mount", duration_s=v)],
                ),
                Path(f"r{i}"),
            )
            for i, v in enumerate(values, 1)
        ]

    def _budget(self, what: str, q: float | None = None) -> float:
        return 0.1

    def _known_stage(self, stage: str) -> None:
        pass


@pytest.mark.parametrize("values", ALL.values(), ids=ALL.keys())
def test_robot_statistics_keywords_over_any_boots(values: list[float]) -> None:
    kw = _Keywords(values)
    finite = [v for v in values if math.isfinite(v)]
    if not values:  # nothing measured yet: the keyword says so
        with pytest.raises(AssertionError, match="No boot measured yet"):
            kw.get_stage_statistics("rootfs_mount")
        return
    assert kw.get_stage_statistics("rootfs_mount") == dump(describe(finite))
    for q in (50, 95, 99):
        if not finite:  # only NaN: no measurement, never within a budget
            with pytest.raises(AssertionError, match=r"none of the last \d+ boots measured it"):
                kw.stage_percentile_should_be_within_budget("rootfs_mount", q, 1.0)
            continue
        value = float(np.percentile(finite, q))
        kw.stage_percentile_should_be_within_budget("rootfs_mount", q, value)  # at: within
        kw.power_to_ui_percentile_should_be_within_budget(q, value)
        below = float(np.nextafter(value, -math.inf))
        with pytest.raises(AssertionError, match=r"over its budget"):
            kw.stage_percentile_should_be_within_budget("rootfs_mount", q, below)


def test_a_failure_rate_that_is_no_number_is_bad_input(tmp_path: Path) -> None:
    """`--max-failure-rate nan` passed click's 0..1 range (NaN compares false) and every
    soak would pass it; the journal refused it as an internal error (exit 3) and left
    an empty soak folder. Now bad input (exit 2) before anything is opened."""
    config = make_config(tmp_path)
    cmd = [sys.executable, "-m", "rig", "soak", "--config", str(config), "--cycles", "1",
           "--id", "nanrate", "--max-failure-rate", "nan", "--json"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=REPO)
    out = json.loads(proc.stdout)
    assert proc.returncode == 2 and out["kind"] == "input", out
    assert "max failure rate nan" in out["error"]
    assert not (tmp_path / "results" / "nanrate").exists()


class _EnergyKeywords(EnergyBudgets):
    def _last(self) -> Boot:
        stage = Stage("kernel", duration_s=0.1, energy_j=0.6, energy_uncertainty_j=0.01)
        return Boot(Report(outcome="ok", run_id="r1", stages=[stage]), Path("r1"))

    def _known_stage(self, stage: str) -> None:
        pass


@pytest.mark.parametrize("budget", [math.nan, math.inf, 0.0, -1.0])
def test_an_energy_budget_that_is_no_number_fails_instead_of_passing(budget: float) -> None:
    with pytest.raises(AssertionError, match="must be > 0 J"):
        _EnergyKeywords().stage_energy_should_be_within_budget("kernel", budget)
    with pytest.raises(AssertionError, match="over its energy budget"):
        _EnergyKeywords().stage_energy_should_be_within_budget("kernel", 0.5)
