"""Which commit to try next, from the verdicts so far (pure). Index 0 is the good end,
n the bad end; a SKIP stays a candidate, as with `git bisect skip` (docs/bisect.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

GOOD = "good"
BAD = "bad"
SKIP = "skip"


@dataclass(frozen=True)
class Bounds:
    good: int  # the last index known good
    bad: int  # the first index known bad after it
    untested: tuple[int, ...]  # candidates between them without a verdict

    @property
    def candidates(self) -> tuple[int, ...]:
        """Where the first bad commit can be: every index after `good` up to `bad`."""
        return tuple(range(self.good + 1, self.bad + 1))


def bounds(n: int, verdicts: Mapping[int, str]) -> Bounds:
    """The narrowest good..bad window the verdicts allow (index 0 good, n bad)."""
    if n < 1:
        raise ValueError(f"a bisect needs at least one commit after the good one, found {n}")
    bad = min([i for i, v in verdicts.items() if v == BAD and 0 < i <= n], default=n)
    good = max([i for i, v in verdicts.items() if v == GOOD and 0 <= i < bad], default=0)
    untested = tuple(i for i in range(good + 1, bad) if i not in verdicts)
    return Bounds(good, bad, untested)


def next_index(n: int, verdicts: Mapping[int, str]) -> int | None:
    """The untested candidate nearest the middle of the window (the lower on a tie), or
    None when the search is over."""
    b = bounds(n, verdicts)
    if not b.untested:
        return None
    mid = (b.good + b.bad) / 2
    return min(b.untested, key=lambda i: (abs(i - mid), i))


def max_steps(n: int) -> int:
    """Steps a search over n candidates takes without skips: ceil(log2 n) (at least 1,
    the ends' own comparison counts for a single candidate)."""
    return max(1, math.ceil(math.log2(n))) if n > 1 else 1
