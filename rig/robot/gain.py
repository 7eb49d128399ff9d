"""What a change gains on one stage (pure): `rig compare`'s statistics with before = the
boots without the change and after = the boots with it, turned round so that the gain is
without - with, and checked against a stated least gain by the gain's one-sided lower
bound (docs/robot.md, "Changes")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rig.compare.stats import Settings, compare, min_boots


@dataclass(frozen=True)
class StageGain:
    """A stage's gain: the Hodges-Lehmann shift without - with, and its interval."""

    stage: str
    gain_s: float | None
    low_s: float | None  # lower bound of the gain, one-sided at `confidence`
    high_s: float | None  # the upper end of the two-sided 1 - 2 alpha interval
    confidence: float  # of `low_s`, one-sided: 1 - alpha
    n_with: int
    n_without: int
    note: str | None  # compare's, when it has one


def stage_gain(
    stage: str, without: Sequence[float], with_change: Sequence[float], alpha: float
) -> StageGain:
    """The gain of `stage` at level `alpha` (0 < alpha < 0.5). The lower end of a
    two-sided 1 - 2 alpha interval is a one-sided 1 - alpha lower bound: a check of "at
    least" looks at one end only, so it need not pay for both. Durations that are no
    number (NaN, inf) are no measurement and left out."""
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be between 0 and 0.5, found {alpha:g}")
    off = [float(v) for v in without if math.isfinite(v)]
    on = [float(v) for v in with_change if math.isfinite(v)]
    c = compare(stage, off, on, Settings(alpha=2 * alpha))  # after - before = with - without
    return StageGain(
        stage,
        _negated(c.difference_s),
        _negated(c.ci_high_s),
        _negated(c.ci_low_s),
        1 - alpha,
        len(on),
        len(off),
        c.note,
    )


def _negated(v: float | None) -> float | None:
    """-v to the nanosecond (pair differences of microsecond times carry float dust),
    never -0.0."""
    return None if v is None else round(-v, 9) + 0.0


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 1e3:+.3f} ms"


def stated(least_s: float) -> str:
    """A stated gain as written: ``20 ms``, ``0.5 ms``, ``-1 ms``."""
    return f"{least_s * 1e3:g} ms"


def describe(g: StageGain) -> str:
    """The gain in one clause: the shift, its lower bound and interval, the boots."""
    if g.low_s is None or g.high_s is None:
        bound = f"no {g.confidence:.0%} lower bound"
    else:
        bound = (
            f"{g.confidence:.0%} lower bound {_ms(g.low_s)} "
            f"({2 * g.confidence - 1:.0%} interval {_ms(g.low_s)} .. {_ms(g.high_s)})"
        )
    return (
        f"gain {_ms(g.gain_s)} (without - with, median shift), {bound}; "
        f"{g.n_with} boots with the change against {g.n_without} without"
    )


def shortfall(g: StageGain, least_s: float) -> str | None:
    """Why `g` does not show a gain of at least `least_s` (None: it does). The lower
    bound decides: a change passes only when the boots rule out every gain under
    `least_s` at the level used."""
    if g.n_with == 0 or g.n_without == 0:
        side = "with the change" if g.n_with == 0 else "without it"
        return f"no boot {side} measured it"
    if g.low_s is None:
        need = min_boots(2 * (1 - g.confidence))
        return (
            f"{g.n_with} boots with the change and {g.n_without} without give no "
            f"{g.confidence:.0%} lower bound: at least {need} a side do"
        )
    if g.low_s < least_s:
        return f"its lower bound is under {stated(least_s)}"
    return None
