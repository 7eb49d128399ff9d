"""Distribution statistics of stage durations and failure rates by outcome class.
Percentiles interpolate linearly between closest ranks (numpy's default, "R-7"), as
the Robot library's percentile budgets do.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from rig.model.summary import Distribution
from rig.outcomes import Outcome, is_boards

PERCENTILES = (50, 95, 99)


def finite(values: Iterable[float]) -> list[float]:
    """The values that are numbers: a NaN or an infinity (only an in-process caller can
    hold one) is no duration."""
    return [float(v) for v in values if math.isfinite(v)]


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile of the finite `values`; None when there are none."""
    a = finite(values)
    return float(np.percentile(np.asarray(a, dtype=np.float64), q)) if a else None


def describe(values: Sequence[float]) -> Distribution:
    """n, min, p50, p95, p99, max, mean and stddev (sample, n - 1) of the finite
    `values`; only n = 0 when there are none, stddev 0 for a single value."""
    a = np.asarray(finite(values), dtype=np.float64)
    if not a.size:
        return Distribution(0)
    lo, hi = float(a.min()), float(a.max())
    p50, p95, p99 = (float(v) for v in np.percentile(a, PERCENTILES))
    # Taken about the first value: equal values then give exactly their value and 0
    # (a sum of 18 times 0.3 does not: a stddev of 1e-17 s for a stage that never
    # varied), and values equal but for rounding give what rounding put between them.
    d = a - a[0]
    mean = min(max(float(a[0] + d.mean()), lo), hi)
    stddev = float(d.std(ddof=1)) if a.size > 1 else 0.0
    return Distribution(int(a.size), lo, p50, p95, p99, hi, mean, stddev)


@dataclass(frozen=True)
class FailureRates:
    cycles: int
    measured: int  # cycles whose outcome is the board's
    not_measured: int  # ended by the rig or the operator
    counts: dict[str, int]  # by outcome, ok first
    failures: int
    failure_rate: float
    rates: dict[str, float]  # each board failure class's share of the measured cycles


def failure_rates(outcomes: Iterable[str]) -> FailureRates:
    """Counts by outcome and each board failure class's share of the cycles that
    measured the board; cycles the rig or the operator ended are `not_measured`."""
    counts = Counter(outcomes)
    board = {k: v for k, v in counts.items() if is_boards(k)}
    n = sum(board.values())
    failures = {k: v for k, v in sorted(board.items()) if k != Outcome.OK}
    return FailureRates(
        cycles=sum(counts.values()),
        measured=n,
        not_measured=sum(counts.values()) - n,
        counts=dict(sorted(counts.items(), key=lambda kv: (kv[0] != Outcome.OK, kv[0]))),
        failures=sum(failures.values()),
        failure_rate=sum(failures.values()) / n if n else 0.0,
        rates={k: v / n for k, v in failures.items()},
    )
