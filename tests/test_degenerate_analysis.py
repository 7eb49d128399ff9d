"""The analysis' statistics meet real data (issue 22, defect 1): rig compare, rig cost and
rig trend through every pair of degenerate samples (tests/degenerate.py), the report
index through durations that are no number, the clock fits and stage energy through one
anchor, two, anchors at one time or equal to rounding, and degenerate supply readings.
Each gives the right result or a documented verdict, never an exception."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rig.analysis.clockfit import Anchor, fit
from rig.analysis.consoleclock import floor_fit
from rig.analysis.energy import Readings, stage_energy
from rig.analysis.hostclock import fit_host
from rig.compare.stats import FASTER, SLOWER, VERDICTS, Settings, compare
from rig.cost.stats import stage_costs
from rig.model.report import Report
from rig.sinks.html.tables import groups
from rig.trend.stats import detect
from tests.degenerate import ALL, CASES, NOT_FINITE, numbers_or_none

# -- two samples: rig compare, rig cost, rig trend (verdict logic: docs/compare.md) -----


@pytest.mark.parametrize("after", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("before", [*CASES.values(), []], ids=[*CASES.keys(), "empty"])
def test_compare_and_cost_of_any_two_samples(before: list[float], after: list[float]) -> None:
    r = compare("rootfs_mount", before, after, Settings(threshold_s=0.001, detect_s=0.01))
    assert r.verdict in VERDICTS and numbers_or_none(r)
    assert (r.n_before, r.n_after) == (len(before), len(after))
    if before and set(before) == set(after):  # the same boots on both sides
        assert r.verdict not in (SLOWER, FASTER)
    (c,) = stage_costs(
        ["rootfs_mount"], {"rootfs_mount": after}, {"rootfs_mount": before}, Settings(detect_s=0.01)
    )
    assert numbers_or_none(c) and (c.n_before, c.n_after) == (len(before), len(after))


@pytest.mark.parametrize("junk", NOT_FINITE.values(), ids=NOT_FINITE.keys())
def test_cost_leaves_out_what_is_no_number(junk: list[float]) -> None:
    off, on = [0.03, 0.0301, 0.0302, 0.0303, 0.0304] * 2, [0.04, 0.0401, 0.0402, 0.0403] * 2
    (clean,) = stage_costs(["s"], {"s": on}, {"s": off}, Settings(detect_s=0.01))
    junk = [v for v in junk if not math.isfinite(v)]
    (c,) = stage_costs(["s"], {"s": on + junk}, {"s": junk + off}, Settings(detect_s=0.01))
    assert c == clean


@pytest.mark.parametrize("values", CASES.values(), ids=CASES.keys())
def test_trend_of_a_steady_series_has_no_change_point(values: list[float]) -> None:
    series = values * 12  # a nightly history of the same boots
    t = detect(series)
    assert t.n == len(series) and math.isfinite(t.noise_s) and math.isfinite(t.penalty)
    if max(values) - min(values) < 1e-12:
        assert t.change_points == [] and t.noise_s < 1e-12


@pytest.mark.parametrize("values", ALL.values(), ids=ALL.keys())
def test_report_index_groups_any_boots(values: list[float]) -> None:
    reports = [Report(outcome="ok", board="b", power_to_ui_s=v) for v in values]
    html = groups(reports or [Report(outcome="panic", board="b")])
    finite = [v for v in values if math.isfinite(v)]
    assert f"<td>{len(finite)} / {max(len(values), 1)}</td>" in html
    assert "nan" not in html.lower() and "inf" not in html.lower()


# -- the analysis' own statistics: clock fits and energy over degenerate inputs ---------

#: printk times of a clock fit's anchors: one, two, all at one time, equal to rounding.
ANCHOR_XS: dict[str, list[float]] = {
    "one": [0.5],
    "two": [0.5, 0.6],
    "same time": [0.5, 0.5, 0.5],
    "same time, five": [0.5] * 5,
    "within rounding": [0.1 + 0.2, 0.3, 0.3, 0.1 + 0.2],
    "spread": [0.1, 0.2, 0.3, 0.4, 0.5],
}


@pytest.mark.parametrize("late", [0.0, 1e-3])
@pytest.mark.parametrize("xs", ANCHOR_XS.values(), ids=ANCHOR_XS.keys())
def test_clock_fits_of_degenerate_anchors_state_a_finite_uncertainty(
    xs: list[float], late: float
) -> None:
    anchors = [
        Anchor(f"a{i}", x, x * 1.00004 + 0.01 + i % 2 * 1e-7, late) for i, x in enumerate(xs)
    ]
    for f in (fit(anchors), floor_fit(anchors)):
        assert f is not None and numbers_or_none(f)
        assert abs(f.slope - 1) < 1e-3  # never a wild slope from points at one time
        for x in (0.0, 0.5, 2.0):
            u = f.uncertainty(x)
            assert math.isfinite(u) and u >= 0
            assert abs(f.offset + f.slope * x - (x * 1.00004 + 0.01)) <= u + 1e-3


@pytest.mark.parametrize("xs", ANCHOR_XS.values(), ids=ANCHOR_XS.keys())
def test_host_clock_of_few_or_equal_delays(xs: list[float]) -> None:
    h = fit_host([(int((x + 0.002) * 1e9), x) for x in xs], 1e-4)
    assert h is not None and numbers_or_none(h) and h.low_s <= h.high_s
    assert math.isfinite(h.uncertainty_s) and h.uncertainty_s > 0


def _readings(t: list[float], w: list[float]) -> Readings:
    ts = np.asarray(t, float)
    return Readings(ts, np.full(len(ts), 5.0), np.asarray(w, float) / 5, np.zeros(len(ts)))


READINGS: dict[str, Readings] = {
    "none": _readings([], []),
    "one": _readings([0.1], [1.0]),
    "all at one time": _readings([0.1, 0.1, 0.1], [1.0, 1.0, 1.0]),
    "steady draw": _readings([0.0, 0.1, 0.2, 0.3], [1.0] * 4),
    "times equal to rounding": _readings([0.1 + 0.2, 0.3, 0.3], [1.0, 2.0, 3.0]),
}


@pytest.mark.parametrize("bounds", [(0.0, 0.3), (0.1, 0.1), (0.05, 0.25), (0.3, 0.1 + 0.2)])
@pytest.mark.parametrize("r", READINGS.values(), ids=READINGS.keys())
def test_stage_energy_of_degenerate_readings(r: Readings, bounds: tuple[float, float]) -> None:
    e = stage_energy(r, *bounds, 1e-4, (1e-6, 1e-6))
    if e is None:  # no reading around it, or a stage of no length: said as none
        return
    assert numbers_or_none(e) and e.energy_j >= 0 and e.energy_uncertainty_j >= 0
    if r is READINGS["steady draw"]:  # 1 W held: the stage's length in joules
        assert e.energy_j == pytest.approx(bounds[1] - bounds[0], rel=1e-9)
