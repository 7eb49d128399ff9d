"""Change points in a boot-time history (pure: durations in time order in, change points
out). One series is the durations of one stage (or power_to_ui) of one board and variant,
in power-on order. The method, step by step, is docs/trend.md's: ranks, noise from first
differences, PELT candidates, verification by the rank test, the dropped re-tested.
Deterministic: the same series gives the same change points.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypeVar

import numpy as np
import ruptures
from ruptures.base import BaseCost
from ruptures.exceptions import NotEnoughPoints
from scipy import stats

from rig.analysis.choices import DEFAULT_ALPHA, DEFAULT_MIN_SEGMENT, PENALTY_FACTOR
from rig.compare.stats import (
    FASTER,
    INCONCLUSIVE,
    MAD_SCALE,
    SLOWER,
    UNCONFIRMED,
    UNREACHABLE,
    Settings,
    StageComparison,
    compare,
    to_ns,
)

T = TypeVar("T", "ChangePoint", "Unconfirmed")

#: Places PELT tries at most; a longer series is searched on a coarser grid and each
#: change point refined to the boot (PELT's time grows faster than linearly with n).
MAX_POSITIONS = 1000


@dataclass(frozen=True)
class TrendSettings:
    threshold_s: float = 0.0  # smallest shift reported (practical significance)
    min_segment: int = DEFAULT_MIN_SEGMENT  # fewest boots on each side of a change point
    alpha: float = DEFAULT_ALPHA  # the rank test's level for one change point
    penalty_factor: float = PENALTY_FACTOR

    def __post_init__(self) -> None:
        if self.min_segment < 4:
            raise ValueError(
                f"min segment must be at least 4 boots (a rank test needs them), "
                f"found {self.min_segment}"
            )
        Settings(alpha=self.alpha, threshold_s=self.threshold_s)  # the rank test's checks
        if self.penalty_factor <= 0:
            raise ValueError(f"penalty factor must be > 0, found {self.penalty_factor:g}")


@dataclass(frozen=True)
class ChangePoint:
    """A change between boot `index - 1` and boot `index` (the first boot after it)."""

    index: int
    direction: str  # "slower" or "faster"
    median_before_s: float
    median_after_s: float
    shift_s: float  # Hodges-Lehmann, after - before
    ci_low_s: float
    ci_high_s: float
    p_value: float
    n_before: int  # boots of the segment before (back to the previous change point)
    n_after: int

    def to_json(self) -> dict[str, Any]:
        return to_ns(self, exact=("p_value",))


@dataclass(frozen=True)
class Unconfirmed:
    """A candidate the rank test could not confirm nor rule out (step 5): `index` is the
    first boot after it, `reason` `unreachable` or `unconfirmed` (docs/compare.md)."""

    index: int
    median_before_s: float
    median_after_s: float
    shift_s: float  # Hodges-Lehmann, after - before
    p_value: float
    n_before: int
    n_after: int
    reason: str
    boots_to_decide: int | None  # per side, for a shift of this size at this spread
    note: str

    def to_json(self) -> dict[str, Any]:
        return to_ns(self, exact=("p_value",))


@dataclass(frozen=True)
class Trend:
    """One series' result: its noise, the penalty used, and the change points."""

    n: int
    noise_s: float  # the durations' boot-to-boot noise (rule of step 2, in seconds)
    penalty: float  # on the ranks / n (step 3)
    change_points: list[ChangePoint]
    candidates: int  # PELT's change points before verification
    inconclusive: list[Unconfirmed] = field(default_factory=list)  # step 5


def noise(values: Sequence[float]) -> float:
    """Robust standard deviation of the boot-to-boot noise, from first differences."""
    x = np.asarray(values, float)
    if len(x) < 3:
        return 0.0
    d = np.diff(x)
    mad = float(np.median(np.abs(d - np.median(d)))) * MAD_SCALE / math.sqrt(2)
    if mad > 0:
        return mad
    return float(np.std(d, ddof=1)) / math.sqrt(2)  # mostly identical durations


def ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks / n (ties get their mean rank)."""
    x = np.asarray(values, float)
    return np.asarray(stats.rankdata(x), float) / max(len(x), 1)


def penalty(values: Sequence[float], factor: float = PENALTY_FACTOR) -> float:
    """beta * sigma^2 * ln(n), in the units of the l2 cost of `values`."""
    n = len(values)
    return factor * noise(values) ** 2 * math.log(max(n, 2))


class CumulativeL2(BaseCost):  # type: ignore[misc]
    """ruptures' `l2` cost from cumulative sums: O(1) a segment, the same values."""

    model = "l2"

    def __init__(self) -> None:
        self.min_size = 1
        self.signal: np.ndarray | None = None
        self._s: list[float] = []
        self._q: list[float] = []

    def fit(self, signal: np.ndarray) -> CumulativeL2:
        x = np.asarray(signal, float).reshape(len(signal), -1)[:, 0]
        self.signal = x.reshape(-1, 1)
        self._s = np.concatenate([[0.0], np.cumsum(x)]).tolist()
        self._q = np.concatenate([[0.0], np.cumsum(x * x)]).tolist()
        return self

    def error(self, start: int, end: int) -> float:
        if end - start < self.min_size:
            raise NotEnoughPoints
        s = self._s[end] - self._s[start]
        return max(self._q[end] - self._q[start] - s * s / (end - start), 0.0)


def candidates(values: Sequence[float], min_segment: int, pen: float) -> list[int]:
    """PELT's change points (the first boot of each new segment). A long series is
    searched on a grid of MAX_POSITIONS places, each point then refined within a step."""
    x = np.asarray(values, float)
    if len(x) < 2 * min_segment or pen <= 0:
        return []
    jump = max(1, math.ceil(len(x) / MAX_POSITIONS))
    cost = CumulativeL2()
    algo = ruptures.Pelt(custom_cost=cost, min_size=min_segment, jump=jump)
    cps = [int(b) for b in algo.fit(x.reshape(-1, 1)).predict(pen=pen)[:-1]]
    if jump == 1:
        return cps
    bounds = [0, *cps, len(x)]
    for i in range(1, len(bounds) - 1):
        lo = max(bounds[i] - jump, bounds[i - 1] + min_segment)
        hi = min(bounds[i] + jump, bounds[i + 1] - min_segment)
        if lo <= hi:
            a, b = bounds[i - 1], bounds[i + 1]
            bounds[i] = min(range(lo, hi + 1), key=lambda k: cost.error(a, k) + cost.error(k, b))
    return bounds[1:-1]


def detect(values: Sequence[float], settings: TrendSettings | None = None) -> Trend:
    """The change points of one series (see the module doc)."""
    s = settings or TrendSettings()
    x = np.asarray(values, float)
    r = ranks(x)
    pen = penalty(r, s.penalty_factor)
    cps = candidates(r, s.min_segment, pen)
    found = len(cps)
    proposed = list(cps)
    cmp_settings = Settings(alpha=s.alpha, threshold_s=s.threshold_s)
    while True:
        bounds = [0, *cps, len(x)]  # each candidate c between its segments lo:c and c:hi
        around = zip(bounds, bounds[1:], bounds[2:], strict=False)
        results = [compare("", x[lo:c], x[c:hi], cmp_settings) for lo, c, hi in around]
        weak = [i for i, r in enumerate(results) if r.verdict not in (SLOWER, FASTER)]
        if not weak:
            break
        drop = max(weak, key=lambda i: (results[i].p_value or 1.0, -i))
        cps.pop(drop)
    points = [_at(ChangePoint, i, r) for i, r in zip(cps, results, strict=True)]
    dropped = [c for c in proposed if c not in cps]
    return Trend(len(x), noise(x), pen, points, found, _unconfirmed(x, cps, dropped, cmp_settings))


def _at(cls: type[T], index: int, r: StageComparison) -> T:
    """A change point or candidate at boot `index`, from the rank test of its segments."""
    named = {"index": index, "direction": r.verdict, "shift_s": r.difference_s, **asdict(r)}
    named["reason"] = r.inconclusive_reason
    return cls(**{f.name: named[f.name] for f in fields(cls)})


def _unconfirmed(
    x: np.ndarray, kept: list[int], dropped: list[int], s: Settings
) -> list[Unconfirmed]:
    """Step 5: each dropped candidate between the change points that stayed; one under
    the threshold, or smaller than its segments detect, is noise and not reported."""
    out = []
    bounds = [0, *kept, len(x)]
    for c in dropped:
        lo = max(b for b in bounds if b < c)
        hi = min(b for b in bounds if b > c)
        r = compare("", x[lo:c], x[c:hi], s)
        if r.verdict == INCONCLUSIVE and r.inconclusive_reason in (UNREACHABLE, UNCONFIRMED):
            out.append(_at(Unconfirmed, c, r))
    return out


def is_known(times_ns: Sequence[int], index: int, window: int, known_ns: Sequence[int]) -> bool:
    """Whether a change point at `index` is one already reported (a time in `known_ns`):
    as boots are added the same change moves a boot or two, so `window` boots match."""
    lo = times_ns[max(index - window, 0)]
    hi = times_ns[min(index + window, len(times_ns) - 1)]
    return any(lo <= t <= hi for t in known_ns)
