"""Before/after comparison of boot times (pure: numbers in, a typed verdict out): the
Hodges-Lehmann shift, its Mann-Whitney interval and p-value, the verdict and the power
analysis of docs/compare.md, "Method"."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache
from typing import Any

import numpy as np
from scipy import stats

from rig.analysis.choices import BONFERRONI, CORRECTIONS

FASTER = "faster"
SLOWER = "slower"
NO_CHANGE = "no_change"
INCONCLUSIVE = "inconclusive"
VERDICTS = (FASTER, SLOWER, NO_CHANGE, INCONCLUSIVE)

# Why a verdict is inconclusive (`inconclusive_reason`, docs/compare.md):
#: no outcome of these boots reaches p < alpha (too few a side, or a side without the stage)
UNREACHABLE = "unreachable"
#: the difference is at least the change these boots detect, yet p >= alpha
UNCONFIRMED = "unconfirmed"
#: the boots detect only changes larger than the threshold: they could not have seen it
UNDERPOWERED = "underpowered"

#: Asymptotic relative efficiency of Mann-Whitney against the t-test for normal data:
#: the rank test needs pi/3 (about 1.05) times the boots for the same power.
ARE = 3 / math.pi
#: MAD * 1.4826 estimates the standard deviation of normal data.
MAD_SCALE = 1.4826
#: Up to this many pairs (m * n), tie-free samples use the exact U distribution.
EXACT_MAX_PAIRS = 2500


@dataclass(frozen=True)
class Settings:
    alpha: float = 0.05  # the confidence is 1 - alpha
    power: float = 0.8  # for the detectable change and the boots needed
    threshold_s: float = 0.0  # smallest change worth a verdict (practical significance)
    detect_s: float | None = None  # a change to plan for: boots per side it needs

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be between 0 and 1, found {self.alpha:g}")
        if not 0 < self.power < 1:
            raise ValueError(f"power must be between 0 and 1, found {self.power:g}")
        if self.threshold_s < 0:
            raise ValueError(f"threshold must be >= 0 s, found {self.threshold_s:g}")
        if self.detect_s is not None and self.detect_s <= 0:
            raise ValueError(f"the change to detect must be > 0 s, found {self.detect_s:g}")


@dataclass(frozen=True)
class StageComparison:
    """One stage (or power_to_ui): after - before, with its interval and verdict."""

    name: str
    n_before: int
    n_after: int
    median_before_s: float | None
    median_after_s: float | None
    difference_s: float | None  # Hodges-Lehmann shift, after - before
    ci_low_s: float | None
    ci_high_s: float | None
    confidence: float
    p_value: float | None
    verdict: str
    spread_s: float | None  # pooled robust standard deviation
    detectable_s: float | None  # smallest change these boots detect at `power`
    boots_needed: int | None  # per side, for Settings.detect_s
    method: str  # "exact" or "normal": how the U distribution was taken
    note: str | None = None
    inconclusive_reason: str | None = None  # UNREACHABLE, UNCONFIRMED, UNDERPOWERED
    boots_to_decide: int | None = None  # per side, for decide_change_s (when inconclusive)
    decide_change_s: float | None = None  # the change those boots are for: max(|diff|, threshold)

    def to_json(self) -> dict[str, Any]:
        return to_ns(self)


def round_ns(doc: dict[str, Any], exact: tuple[str, ...] = ()) -> dict[str, Any]:
    """Floats to the nanosecond (pair differences of microsecond times carry float dust)
    but those in `exact` (a tiny p must not read 0)."""
    return {
        k: round(v, 9) if isinstance(v, float) and k not in exact else v for k, v in doc.items()
    }


def to_ns(result: Any, exact: tuple[str, ...] = ()) -> dict[str, Any]:
    """A result's fields, through `round_ns`."""
    return round_ns(asdict(result), exact)


@cache
def u_pmf(m: int, n: int) -> np.ndarray:
    """P(U = u), u = 0..m*n, for U = #{after > before} with m after and n before values,
    no shift, no ties: a recurrence on the largest of the m + n values."""
    prev = [np.ones(1) for _ in range(n + 1)]  # zero after values: U = 0
    for i in range(1, m + 1):
        row = [np.ones(1)]
        for j in range(1, n + 1):
            p = np.zeros(i * j + 1)
            p[j : j + len(prev[j])] += i / (i + j) * prev[j]
            p[: len(row[j - 1])] += j / (i + j) * row[j - 1]
            row.append(p)
        prev = row
    return prev[n]


def cut_count(m: int, n: int, alpha: float, exact: bool, ties: float = 0.0) -> int:
    """k, the pair differences cut from each end for a 1 - alpha interval: the largest k
    with P(U <= k - 1) <= alpha / 2; 0: too few boots for an interval."""
    if exact:
        cdf = np.cumsum(u_pmf(m, n))
        return int(np.count_nonzero(cdf <= alpha / 2 * (1 + 1e-9)))
    total = m + n
    var = m * n / 12 * ((total + 1) - ties / (total * (total - 1)))
    z = float(stats.norm.ppf(1 - alpha / 2))
    return max(0, math.floor(m * n / 2 + 0.5 - z * math.sqrt(max(var, 0.0))))


def robust_spread(before: Sequence[float], after: Sequence[float]) -> float | None:
    """Pooled standard deviation from each side's MAD (scaled to a normal sigma), or its
    standard deviation where the MAD is 0."""

    def sd(x: np.ndarray) -> float:
        mad = float(np.median(np.abs(x - np.median(x)))) * MAD_SCALE
        return mad if mad > 0 else float(np.std(x, ddof=1))

    b, a = np.asarray(before, float), np.asarray(after, float)
    dof = len(b) + len(a) - 2
    if len(b) < 2 or len(a) < 2 or dof < 1:
        return None
    return math.sqrt(((len(b) - 1) * sd(b) ** 2 + (len(a) - 1) * sd(a) ** 2) / dof)


def detectable_change(spread: float, m: int, n: int, alpha: float, power: float) -> float:
    """The shift detected with probability `power` by a two-sided test at `alpha`:
    (z_{1-alpha/2} + z_power) * sigma * sqrt(1/m + 1/n) / sqrt(ARE)."""
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    return z * spread * math.sqrt(1 / m + 1 / n) / math.sqrt(ARE)


def min_boots(alpha: float) -> int:
    """Fewest boots per side for which an interval at 1 - alpha exists at all."""
    n = 2
    while cut_count(n, n, alpha, exact=True) == 0:
        n += 1
    return n


def boots_needed(spread: float, change_s: float, alpha: float, power: float) -> int:
    """Boots per side (equal sides) to detect `change_s` with probability `power`."""
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    n = math.ceil(2 * (z * spread / change_s) ** 2 / ARE)
    return max(n, min_boots(alpha))


def smallest_p(m: int, n: int) -> float:
    """The smallest two-sided p the rank test can give m against n boots (U = 0)."""
    if m == 0 or n == 0:
        return 1.0
    if m * n <= EXACT_MAX_PAIRS:
        return min(1.0, 2 / math.comb(m + n, n))
    z = (m * n / 2 - 0.5) / math.sqrt(m * n * (m + n + 1) / 12)
    return min(1.0, float(2 * stats.norm.sf(z)))


def compare(
    name: str, before: Sequence[float], after: Sequence[float], settings: Settings
) -> StageComparison:
    """The comparison of one stage's durations (see the module doc)."""
    m, n = len(after), len(before)
    conf = 1 - settings.alpha
    if m == 0 or n == 0:
        side = "before or after" if m == n == 0 else "before" if n == 0 else "after"
        return StageComparison(
            name, n, m, _median(before), _median(after), None, None, None, conf, None,
            INCONCLUSIVE, None, None, None, "none",
            f"no boots measured it {side}: nothing to compare", UNREACHABLE,
        )  # fmt: skip
    b, a = np.asarray(before, float), np.asarray(after, float)
    combined = np.concatenate([a, b])
    _, counts = np.unique(combined, return_counts=True)
    ties = float(np.sum(counts**3 - counts))  # the normal approximation's tie correction
    exact = ties == 0 and m * n <= EXACT_MAX_PAIRS
    method = "exact" if exact else "normal"
    d = np.sort(np.subtract.outer(a, b).ravel())  # every after - before pair
    k = cut_count(m, n, settings.alpha, exact, ties)
    low = high = None
    note = None
    if k > 0:
        low, high = float(d[k - 1]), float(d[m * n - k])
    p = _p_value(a, b, exact)
    shift = float(np.median(d))
    verdict = NO_CHANGE
    above = low is not None and low > 0
    below = high is not None and high < 0
    significant = p < settings.alpha and (above or below)
    if significant:
        if above and shift >= settings.threshold_s:
            verdict = SLOWER
        elif below and -shift >= settings.threshold_s:
            verdict = FASTER
        else:
            note = f"significant but under the threshold of {settings.threshold_s:g} s"
    spread = robust_spread(b, a)
    detectable = needed = None
    if spread is not None and k > 0:
        detectable = detectable_change(spread, m, n, settings.alpha, settings.power)
    if spread is not None and settings.detect_s is not None:
        needed = boots_needed(spread, settings.detect_s, settings.alpha, settings.power)
    reason = decide = None
    to_decide: int | None = None
    if not significant:
        reason, why = _undecided(m, n, k, p, shift, detectable, np.ptp(combined) == 0, settings)
        if reason is not None:
            verdict = INCONCLUSIVE
            sigma = _decision_spread(spread, low, high, m, n, settings.alpha)
            decide, to_decide, how = _to_decide(shift, sigma, min(m, n), settings)
            if to_decide is None and reason == UNREACHABLE:
                how += f"; a verdict needs at least {min_boots(settings.alpha)} boots a side"
            note = why + how
    return StageComparison(
        name, n, m, _median(b), _median(a), shift, low, high, conf, p, verdict, spread,
        detectable, needed, method, note, reason, to_decide, decide,
    )  # fmt: skip


def _ms(v: float, sign: bool = False) -> str:
    return f"{v * 1e3:+.2f} ms" if sign else f"{v * 1e3:.2f} ms"


def _undecided(
    m: int,
    n: int,
    k: int,
    p: float,
    shift: float,
    detectable: float | None,
    identical: bool,
    s: Settings,
) -> tuple[str | None, str]:
    """Why a result that is not significant cannot be called `no_change` (None: it can),
    and the sentence that says so."""
    alpha = s.alpha
    lowest = smallest_p(m, n)
    if lowest >= alpha or k == 0:
        why = f"{n} boots before and {m} after cannot reach p < {alpha:.2g} "
        why += (
            f"(the smallest p they can give is {lowest:.2g})"
            if lowest >= alpha
            else f"(too few for a {1 - alpha:.1%} interval with these ties)"
        )
        return UNREACHABLE, why
    if identical:
        return None, ""  # every boot the same on both sides: no change to the resolution
    if detectable is not None and abs(shift) >= max(detectable, s.threshold_s):
        return UNCONFIRMED, (
            f"a difference of {_ms(shift, True)} is at least what these boots detect "
            f"({_ms(detectable)}), yet p = {p:.2g} is not under {alpha:.2g}"
        )
    if s.threshold_s > 0 and detectable is not None and detectable > s.threshold_s:
        return UNDERPOWERED, (
            f"these boots detect {_ms(detectable)} with {s.power:.0%} power, more than the "
            f"threshold of {_ms(s.threshold_s)}: a change of that size could have gone unseen"
        )
    return None, ""


def _decision_spread(
    spread: float | None, low: float | None, high: float | None, m: int, n: int, alpha: float
) -> float | None:
    """The larger of the pooled MAD spread and the one the rank interval implies: a
    stray boot the rank test pays for leaves the MAD untouched, so the MAD alone would
    promise a verdict from as many boots as already failed to give one."""
    found = [spread] if spread is not None else []
    if low is not None and high is not None:
        z = float(stats.norm.ppf(1 - alpha / 2))
        found.append((high - low) / 2 * math.sqrt(ARE) / (z * math.sqrt(1 / m + 1 / n)))
    return max(found) if found else None


def _to_decide(
    shift: float, spread: float | None, fewest: int, s: Settings
) -> tuple[float | None, int | None, str]:
    """The change a decision is for (the difference seen, or the larger threshold), the
    boots per side it needs at this spread, and the clause that says so."""
    size = max(abs(shift), s.threshold_s)
    if spread is None:
        return size, None, f"; the spread is unknown with {fewest} boot(s) on a side"
    if size <= 0:
        return None, None, "; no difference seen: no number of boots is enough for a zero change"
    n = boots_needed(spread, size, s.alpha, s.power)
    label = _ms(shift, True) if size == abs(shift) else _ms(size)
    return (
        size,
        n,
        (
            f"; a change of {label} at this spread (sigma {_ms(spread)}) needs {n} boots a side "
            f"({s.power:.0%} power, p < {s.alpha:.2g})"
        ),
    )


def _p_value(after: np.ndarray, before: np.ndarray, exact: bool) -> float:
    if np.ptp(np.concatenate([after, before])) == 0:
        return 1.0  # every boot identical: nothing to rank (scipy would give nan)
    method = "exact" if exact else "asymptotic"
    res = stats.mannwhitneyu(after, before, alternative="two-sided", method=method)
    p = float(res.pvalue)
    return 1.0 if math.isnan(p) else min(p, 1.0)


def _median(x: Sequence[float]) -> float | None:
    return float(np.median(np.asarray(x, float))) if len(x) else None


def stage_settings(settings: Settings, count: int, correction: str) -> Settings:
    """The settings each of `count` stages is judged with. Bonferroni: alpha / count per
    stage, so that all verdicts together are wrong with probability <= alpha."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction {correction!r}: expected one of {', '.join(CORRECTIONS)}")
    if correction == BONFERRONI and count > 1:
        return replace(settings, alpha=settings.alpha / count)
    return settings


def compare_all(
    names: Sequence[str],
    before: Mapping[str, Sequence[float]],
    after: Mapping[str, Sequence[float]],
    settings: Settings,
    correction: str = BONFERRONI,
) -> list[StageComparison]:
    """`compare` for each name, in order; a name a side lacks compares as empty."""
    each = stage_settings(settings, len(names), correction)
    return [compare(s, before.get(s, ()), after.get(s, ()), each) for s in names]
