"""The observer's cost (pure): the order of `rig cost`'s boots, and what instrumentation
costs each stage, by `rig compare`'s statistics with after = on and before = off
(docs/cost.md, "Method")."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rig.analysis.choices import BONFERRONI, OFF, ON, ORDERS
from rig.compare.stats import (
    FASTER,
    SLOWER,
    Settings,
    StageComparison,
    compare_all,
    to_ns,
)

COSTS = "costs"
SAVES = "saves"
NO_COST = "no_cost"
_VERDICT = {SLOWER: COSTS, FASTER: SAVES}


def schedule(pairs: int, order: str, seed: int = 0) -> list[str]:
    """The variant of each boot, in boot order: `pairs` boots of each."""
    if order not in ORDERS:
        raise ValueError(f"order {order!r}: expected one of {', '.join(ORDERS)}")
    if pairs < 0:
        raise ValueError(f"pairs must be >= 0, found {pairs}")
    rng = np.random.default_rng([seed, 13])
    out: list[str] = []
    for i in range(0, pairs, 2):
        first = ON
        if order == "random":
            first = ON if rng.integers(2) == 0 else OFF
        second = OFF if first == ON else ON
        block = [first, second, second, first] if order != "abab" else [ON, OFF, ON, OFF]
        out += block[: 2 * min(2, pairs - i)]
    return out


@dataclass(frozen=True)
class StageCost:
    """One stage (or power_to_ui): on - off."""

    name: str
    cost_s: float | None  # Hodges-Lehmann shift on - off
    ci_low_s: float | None
    ci_high_s: float | None
    p_value: float | None
    verdict: str  # costs | saves | no_cost
    confidence: float  # of this stage's interval (1 - alpha / stages with Bonferroni)
    n_on: int
    n_off: int
    median_on_s: float | None
    median_off_s: float | None
    median_difference_s: float | None  # median(on) - median(off)
    detectable_s: float | None  # the smallest cost these boots detect (compare's MDD)
    note: str | None = None

    def to_json(self) -> dict[str, object]:
        return to_ns(self)


def _cost(c: StageComparison) -> StageCost:
    on, off = c.median_after_s, c.median_before_s
    diff = on - off if on is not None and off is not None else None
    return StageCost(
        name=c.name,
        cost_s=c.difference_s,
        ci_low_s=c.ci_low_s,
        ci_high_s=c.ci_high_s,
        p_value=c.p_value,
        verdict=_VERDICT.get(c.verdict, NO_COST),
        confidence=c.confidence,
        n_on=c.n_after,
        n_off=c.n_before,
        median_on_s=on,
        median_off_s=off,
        median_difference_s=diff,
        detectable_s=c.detectable_s,
        note=c.note,
    )


def stage_costs(
    names: Sequence[str],
    on: Mapping[str, Sequence[float]],
    off: Mapping[str, Sequence[float]],
    settings: Settings,
    correction: str = BONFERRONI,
) -> list[StageCost]:
    """The cost of each named stage: compare's statistics with after = on, before = off.
    A duration that is no number (NaN, inf) is left out: it is no measurement."""
    return [_cost(c) for c in compare_all(names, _finite(off), _finite(on), settings, correction)]


def _finite(side: Mapping[str, Sequence[float]]) -> dict[str, list[float]]:
    return {k: [float(v) for v in vs if math.isfinite(v)] for k, vs in side.items()}
