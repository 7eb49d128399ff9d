"""Statistics meet real data (issue 22, defect 1): every public statistics entry point is
driven through the samples a healthy bench gives as readily as a noisy one (one boot,
two, a stage that measures the same on every boot, durations equal but for float
rounding, as 0.1 + 0.2 and 0.3 are) and through what no measurement is (NaN, inf, none).
Each must give the right result or a documented verdict, never an exception that
would reach the user as "internal error"."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from rig.model.soak import CycleRecord, EndRecord, HeaderRecord
from rig.model.summary import Distribution
from rig.soak.html import histogram, render
from rig.soak.journal import SCHEMA, Journal, read_records
from rig.soak.summary import summarize

#: Seconds a stage measured on each boot; every case a real soak can journal.
CASES: dict[str, list[float]] = {
    "one boot": [0.03],
    "two boots": [0.03, 0.031],
    "identical": [0.3] * 5,
    "within rounding": [0.1 + 0.2] * 4 + [0.3],
    # rootfs_mount from two printk stamps on five boots of the board
    "printk differences": [0.030001, 0.030001, 0.030001000000000028, 0.030000999999999972],
    "zero duration": [0.0, 0.0, 0.0],
    "spread": [0.12, 0.125, 0.121, 0.3, 0.122],
}
#: What is no measurement; only an in-process caller can hold one (the journal, the
#: report readers and the model codec refuse them).
NOT_FINITE: dict[str, list[float]] = {
    "nan among values": [0.03, math.nan, 0.031],
    "inf among values": [0.03, math.inf, 0.031],
    "only nan": [math.nan, math.nan],
    "empty": [],
}


def _journaled_soak(tmp: Path, rootfs: list[float]) -> tuple[object, list[CycleRecord]]:
    folder = tmp / "soak"
    head = HeaderRecord(
        schema=SCHEMA, soak_id="s", stages=["kernel", "rootfs_mount"], board="b", variant="v"
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
