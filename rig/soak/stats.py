"""Distribution statistics of stage durations and failure rates by outcome class.

Percentiles interpolate linearly between closest ranks (numpy's default, "R-7"), the
same definition the Robot library's percentile budgets use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from rig.outcomes import Outcome, is_boards

PERCENTILES = (50, 95, 99)


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        raise ValueError("percentile of no values")
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def describe(values: Sequence[float]) -> dict[str, Any]:
    """n, min, p50, p95, p99, max, mean and stddev (sample, n - 1) of `values`."""
    if not values:
        return {"n": 0}
    a = np.asarray(values, dtype=np.float64)
    out: dict[str, Any] = {"n": int(a.size), "min": float(a.min())}
    for q, v in zip(PERCENTILES, np.percentile(a, PERCENTILES), strict=True):
        out[f"p{q}"] = float(v)
    out["max"] = float(a.max())
    out["mean"] = float(a.mean())
    out["stddev"] = float(a.std(ddof=1)) if a.size > 1 else 0.0
    return out


def failure_rates(outcomes: Iterable[str]) -> dict[str, Any]:
    """Counts by outcome and, for each of the board's failure classes, its share of the
    cycles that measured the board. Cycles the rig or the operator ended (interrupted,
    rig_error, invalid_artifacts, analyzer_error) are counted apart (`not_measured`):
    they say nothing of the board."""
    counts = Counter(outcomes)
    board = {k: v for k, v in counts.items() if is_boards(k)}
    n = sum(board.values())
    failures = {k: v for k, v in sorted(board.items()) if k != Outcome.OK}
    return {
        "cycles": sum(counts.values()),
        "measured": n,
        "not_measured": sum(counts.values()) - n,
        "counts": dict(sorted(counts.items(), key=lambda kv: (kv[0] != Outcome.OK, kv[0]))),
        "failures": sum(failures.values()),
        "failure_rate": sum(failures.values()) / n if n else 0.0,
        "rates": {k: v / n for k, v in failures.items()},
    }
