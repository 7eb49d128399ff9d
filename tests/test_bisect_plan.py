"""`rig bisect`'s pure parts (issue 24): the planner's order and skip semantics, and the
step decision's verdicts and error budget, on numbers alone."""

from __future__ import annotations

import numpy as np
import pytest

from rig.bisect.decide import UNDECIDED, budget, check_ends, decide, reachable
from rig.bisect.plan import BAD, GOOD, SKIP, bounds, max_steps, next_index
from rig.compare.stats import FASTER, SLOWER


def _search(
    n: int, first_bad: int, skips: frozenset[int] = frozenset()
) -> tuple[list[int], dict[int, str]]:
    verdicts: dict[int, str] = {}
    order = []
    while (i := next_index(n, verdicts)) is not None:
        order.append(i)
        verdicts[i] = SKIP if i in skips else (BAD if i >= first_bad else GOOD)
    return order, verdicts


@pytest.mark.parametrize("n", [1, 2, 3, 8, 13, 64])
def test_every_first_bad_commit_is_found_within_log2_steps(n: int) -> None:
    for first in range(1, n + 1):
        order, verdicts = _search(n, first)
        assert bounds(n, verdicts).candidates == (first,)
        assert len(order) <= max_steps(n)


def test_the_middle_first_then_halves() -> None:
    assert next_index(8, {}) == 4
    assert next_index(8, {4: BAD}) == 2
    assert next_index(8, {4: BAD, 2: GOOD}) == 3
    assert next_index(8, {4: BAD, 2: GOOD, 3: GOOD}) is None
    assert bounds(8, {4: BAD, 2: GOOD, 3: GOOD}).candidates == (4,)


def test_a_skip_is_tried_around_and_reported_as_a_range_when_it_hides_the_answer() -> None:
    # The skipped commit is not the answer: its neighbours decide.
    order, verdicts = _search(8, 4, frozenset({2}))
    assert bounds(8, verdicts).candidates == (4,)
    assert 2 in order and 1 in order and 3 in order
    # The skipped commit is the last good one's successor: it may be the first bad.
    _, verdicts = _search(8, 4, frozenset({3}))
    assert bounds(8, verdicts).candidates == (3, 4)
    # Everything skipped: every commit after good is a candidate.
    _, verdicts = _search(4, 2, frozenset({1, 2, 3}))
    assert bounds(4, verdicts).candidates == (1, 2, 3, 4)


def test_budget_splits_alpha_over_steps_and_looks() -> None:
    b = budget(0.05, 8, 4, 8)
    assert (b.steps, b.looks) == (3, 2)
    assert b.per_step == pytest.approx(0.05 / 3)
    assert b.per_test == pytest.approx(0.05 / 3 / 2)  # one test of two can err a look
    assert b.overall(3) == pytest.approx(0.05)
    assert b.overall(5) == pytest.approx(5 * 0.05 / 3)  # skips made more steps
    assert reachable(b, 8, 8) is None
    # 3 boots of a step against 3 of an end never reach p < 0.008: refused up front.
    assert "raise --max-boots" in (reachable(budget(0.05, 8, 3, 3), 20, 3) or "")
    # The ends are compared two-sided: 4 boots of each give at best 2/70 = 0.029.
    assert "could never be told apart" in (reachable(b, 4, 8) or "")
    # A step's tests are one-sided: 4 against 4 beside it reach 1/70 = 0.014 < 0.05/3
    # (one look), though two-sided they would not (0.029).
    one_look = budget(0.05, 8, 4, 4)
    assert one_look.per_test == pytest.approx(0.05 / 3)
    assert reachable(one_look, 8, 4) is None
    # Without the ends beside it, a step meets the ends' own boots: 2 against 5 reach 1/21.
    assert "2 boots of a step against 5 of an end" in (
        reachable(budget(0.05, 8, 2, 2), 5, 2, beside=False) or ""
    )
    with pytest.raises(ValueError):
        budget(0.05, 8, 5, 4)


def _boots(rng: np.random.Generator, mean_ms: float, n: int) -> list[float]:
    return list((mean_ms + rng.normal(0, 3, n)) / 1e3)


def test_steps_are_decided_like_the_end_they_resemble() -> None:
    rng = np.random.default_rng(7)
    b = budget(0.05, 8, 4, 8)
    good, bad = _boots(rng, 300, 8), _boots(rng, 330, 8)
    ends = check_ends(good, bad, b, 8, "power_to_ui")
    assert ends.differ and ends.direction == SLOWER
    assert ends.detectable_s is not None and 0.001 < ends.detectable_s < 0.01
    assert decide(good, bad, _boots(rng, 300.3, 4), ends, b, "x").verdict == GOOD
    assert decide(good, bad, _boots(rng, 330, 4), ends, b, "x").verdict == BAD
    assert decide(good, bad, _boots(rng, 320, 4), ends, b, "x").verdict == BAD  # part of it
    # Two boots cannot tell anything at this level: not yet decided.
    assert decide(good, bad, _boots(rng, 330, 2), ends, b, "x").verdict == UNDECIDED
    # A search for a change that made the stage faster works the same way round.
    fast = check_ends(bad, good, b, 8, "x")
    assert fast.differ and fast.direction == FASTER
    assert decide(bad, good, _boots(rng, 300, 4), fast, b, "x").verdict == BAD


def test_ends_that_do_not_differ_are_not_a_search() -> None:
    rng = np.random.default_rng(3)
    b = budget(0.05, 8, 4, 8)
    ends = check_ends(_boots(rng, 300, 8), _boots(rng, 300.5, 8), b, 8, "x")
    assert not ends.differ


def test_a_step_is_tested_one_sided() -> None:
    """A verdict needs a difference in one direction only, so each test is one-sided at
    per_test: 4 boots of which one falls below two of the good end's 8 give p = 4/495 =
    0.0081 one-sided (0.016 two-sided), under per_test = 0.0083: like bad, not undecided."""
    b = budget(0.05, 8, 4, 8)
    good = [(300 + i) / 1e3 for i in range(8)]
    bad = [(330 + i) / 1e3 for i in range(8)]
    ends = check_ends(good, bad, b, 8, "x")
    step = decide(good, bad, [0.3055, 0.3315, 0.3325, 0.3335], ends, b, "x")
    assert step.verdict == BAD
    assert step.p_value == pytest.approx(4 / 495) and step.p_value < b.per_test
    assert step.vs_good.p_value == pytest.approx(8 / 495)  # the two-sided p, as compared
