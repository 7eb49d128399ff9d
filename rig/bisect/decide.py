"""What one step's boots say: like the good end, like the bad end, or not yet (pure).

The error budget is docs/bisect.md's. Of a step's two tests only one can err for a commit
like one of the ends (the search assumes one change), so each runs at the whole per-test
level; one-sided, as a verdict follows only from a difference in the direction it needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rig.bisect.plan import BAD, GOOD, max_steps
from rig.compare.stats import (
    FASTER,
    SLOWER,
    Settings,
    StageComparison,
    compare,
    detectable_change,
    robust_spread,
    smallest_p,
)

UNDECIDED = "undecided"


@dataclass(frozen=True)
class Budget:
    """The error rates, stated before the first boot."""

    alpha: float  # the whole search wrong with at most this probability
    steps: int  # the steps it is split over
    looks: int  # batches a step may take
    power: float = 0.8

    @property
    def per_step(self) -> float:
        return self.alpha / self.steps

    @property
    def per_test(self) -> float:
        return self.per_step / self.looks

    @property
    def two_sided(self) -> float:
        """The two-sided level a step's one-sided tests at `per_test` run at."""
        return min(1.0, 2 * self.per_test)

    def overall(self, steps_taken: int) -> float:
        """The Bonferroni bound on the whole search for the steps it really took (skips
        and undecided steps can make it more than planned)."""
        return min(1.0, max(steps_taken, self.steps) * self.per_step)

    def to_json(self) -> dict[str, float | int]:
        return {
            "alpha": self.alpha,
            "steps": self.steps,
            "looks": self.looks,
            "per_step": self.per_step,
            "per_test": self.per_test,
            "power": self.power,
        }


def budget(alpha: float, commits: int, batch: int, max_boots: int) -> Budget:
    if not 0 < alpha < 1:
        raise ValueError(f"--alpha must be between 0 and 1, found {alpha:g}")
    if batch < 1 or max_boots < batch:
        raise ValueError(f"--batch {batch} and --max-boots {max_boots}: need 1 <= batch <= max")
    return Budget(alpha, max_steps(commits), -(-max_boots // batch))


def reachable(b: Budget, end_boots: int, max_boots: int, beside: bool = True) -> str | None:
    """Why the search could never decide with these boots (None: it can): the ends are
    compared two-sided (either direction is a change), a step one-sided against as many
    boots of an end as it meets (its own number when the ends may be booted beside it and
    the bench turns out to be cheap, else the ends' own boots)."""
    ends = smallest_p(end_boots, end_boots)
    if ends >= b.per_test:
        return (
            f"{end_boots} boots of each end give at best p = {ends:.2g}, not under the "
            f"{b.per_test:.2g} the ends are compared at: they could never be told apart; "
            "raise --end-boots, or --alpha"
        )
    n = min(end_boots, max_boots) if beside else end_boots
    step = smallest_p(max_boots, n) / 2  # a step's tests are one-sided
    if step < b.per_test:
        return None
    return (
        f"{max_boots} boots of a step against {n} of an end give at best one-sided p = "
        f"{step:.2g}, not under the {b.per_test:.2g} each test runs at; raise --max-boots "
        "or --end-boots, or --alpha"
    )


@dataclass(frozen=True)
class Ends:
    """The good and bad ends compared: do they differ, and what a step can detect."""

    comparison: StageComparison  # after = bad, before = good
    differ: bool
    direction: str  # SLOWER or FASTER: how bad differs from good
    detectable_s: float | None  # the change a step at max_boots detects against an end

    def to_json(self) -> dict[str, object]:
        return {
            "comparison": self.comparison.to_json(),
            "differ": self.differ,
            "direction": self.direction,
            "detectable_s": self.detectable_s,
        }


def check_ends(
    good: Sequence[float],
    bad: Sequence[float],
    b: Budget,
    max_boots: int,
    stage: str,
    beside: int | None = None,
) -> Ends:
    """The ends differ when the rank test at the per-test level says bad is slower or
    faster than good; the smallest change a step detects comes from their spread, against
    `beside` boots of each end where the ends are booted beside each step, else against
    the ends' own boots."""
    c = compare(stage, good, bad, Settings(alpha=b.per_test, power=b.power))
    differ = c.verdict in (SLOWER, FASTER)
    direction = FASTER if (c.difference_s or 0.0) < 0 else SLOWER
    spread = robust_spread(good, bad)
    detect = None
    if spread is not None:
        n = beside if beside is not None else min(len(good), len(bad))
        detect = detectable_change(spread, max_boots, n, b.two_sided, b.power)
    return Ends(c, differ, direction, detect)


@dataclass(frozen=True)
class Step:
    verdict: str  # GOOD, BAD or UNDECIDED
    p_value: float | None  # of the test that decided (the smaller one when undecided)
    vs_good: StageComparison  # after = the step, before = the good end
    vs_bad: StageComparison  # after = the step, before = the bad end

    def to_json(self) -> dict[str, object]:
        return {
            "verdict": self.verdict,
            "p": self.p_value,
            "vs_good": self.vs_good.to_json(),
            "vs_bad": self.vs_bad.to_json(),
        }


def decide(
    good: Sequence[float],
    bad: Sequence[float],
    step: Sequence[float],
    ends: Ends,
    b: Budget,
    stage: str,
) -> Step:
    """BAD when the step differs from the good end the way the bad end does (a commit
    holding part of the change is bad: it moved the stage); GOOD when it differs from
    the bad end towards the good one and not from the good end; UNDECIDED otherwise."""
    # One-sided at per_test: the two-sided test at its level, in one direction.
    s = Settings(alpha=b.two_sided, power=b.power)
    vs_good = compare(stage, good, step, s)
    vs_bad = compare(stage, bad, step, s)
    back = FASTER if ends.direction == SLOWER else SLOWER
    if vs_good.verdict == ends.direction:
        return Step(BAD, _one_sided(vs_good.p_value), vs_good, vs_bad)
    if vs_bad.verdict == back:
        return Step(GOOD, _one_sided(vs_bad.p_value), vs_good, vs_bad)
    ps = [p for p in (vs_good.p_value, vs_bad.p_value) if p is not None]
    return Step(UNDECIDED, _one_sided(min(ps)) if ps else None, vs_good, vs_bad)


def _one_sided(p: float | None) -> float | None:
    return None if p is None else p / 2
