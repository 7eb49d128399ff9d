"""The observer's cost (pure): the order of `rig cost`'s boots, and what instrumentation
costs each stage, by `rig compare`'s statistics with after = on and before = off
(docs/cost.md, "Method")."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from rig.analysis.choices import BONFERRONI, OFF, ON, ORDERS
from rig.compare.stats import (
    FASTER,
    SLOWER,
    Settings,
    StageComparison,
    compare_all,
    round_ns,
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


def verdict(c: StageComparison) -> str:
    """`rig cost`'s verdict of a stage: costs | saves | no_cost."""
    return _VERDICT.get(c.verdict, NO_COST)


def cost_json(c: StageComparison) -> dict[str, object]:
    """One stage's cost in `rig cost`'s words (docs/cost.md): on = after, off = before."""
    on, off = c.median_after_s, c.median_before_s
    doc = {
        "name": c.name,
        "cost_s": c.difference_s,  # Hodges-Lehmann shift on - off
        "ci_low_s": c.ci_low_s,
        "ci_high_s": c.ci_high_s,
        "p_value": c.p_value,
        "verdict": verdict(c),
        "confidence": c.confidence,  # of this stage's interval (1 - alpha / stages, Bonferroni)
        "n_on": c.n_after,
        "n_off": c.n_before,
        "median_on_s": on,
        "median_off_s": off,
        "median_difference_s": on - off if on is not None and off is not None else None,
        "detectable_s": c.detectable_s,  # the smallest cost these boots detect
        "note": c.note,
    }
    return round_ns(doc)


def stage_costs(
    names: Sequence[str],
    on: Mapping[str, Sequence[float]],
    off: Mapping[str, Sequence[float]],
    settings: Settings,
    correction: str = BONFERRONI,
) -> list[StageComparison]:
    """The cost of each named stage: compare's statistics with after = on, before = off.
    A duration that is no number (NaN, inf) is left out: it is no measurement."""
    return compare_all(names, _finite(off), _finite(on), settings, correction)


def _finite(side: Mapping[str, Sequence[float]]) -> dict[str, list[float]]:
    return {k: [float(v) for v in vs if math.isfinite(v)] for k, vs in side.items()}
