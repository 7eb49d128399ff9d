"""What one tried advisory gained (pure): `rig compare`'s statistics on power-to-UI with
before = the boots without the knob, after = the boots with it, judged against the
advisory's own prediction (docs/try.md, "Verdicts")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rig.compare.stats import FASTER, INCONCLUSIVE, SLOWER, StageComparison, round_ns

GAINED, NO_GAIN, SLOWER_NOW, UNDECIDED, BROKE = (
    "gained",
    "no_gain",
    "slower",
    "inconclusive",
    "broke",
)
VERDICTS = (GAINED, NO_GAIN, SLOWER_NOW, UNDECIDED, BROKE)
#: The prediction against the measured interval: inside it, above it (the advisory promised
#: more than the knob gave), below it; an upper bound holds unless the gain exceeds it.
WITHIN, ABOVE, BELOW, HOLDS, EXCEEDED = "within", "above", "below", "holds", "exceeded"


@dataclass(frozen=True)
class Gain:
    """The knob's gain on power-to-UI: without - with, and its interval."""

    gain_s: float | None
    ci_low_s: float | None
    ci_high_s: float | None
    verdict: str
    prediction: str | None
    outcome_kept: bool
    outcomes_without: dict[str, int]
    outcomes_with: dict[str, int]


def usual(outcomes: Sequence[str]) -> str | None:
    """The outcome most boots had (the first of a tie), None without boots."""
    return Counter(outcomes).most_common(1)[0][0] if outcomes else None


def judge(
    c: StageComparison,
    predicted_s: float | None,
    predicted_kind: str | None,
    without: Sequence[str],
    with_knob: Sequence[str],
) -> Gain:
    """`c` compares power-to-UI, before = without the knob, after = with it. The boot must
    keep its outcome: every boot with the knob has the one most boots without it had (and
    that is a boot that reached its UI), else the verdict is BROKE whatever the times say."""
    gain = None if c.difference_s is None else -c.difference_s
    low = None if c.ci_high_s is None else -c.ci_high_s
    high = None if c.ci_low_s is None else -c.ci_low_s
    base = usual(without)
    kept = base is not None and bool(with_knob) and all(o == base for o in with_knob)
    if not kept:
        verdict = BROKE
    elif c.verdict == FASTER:
        verdict = GAINED
    elif c.verdict == SLOWER:
        verdict = SLOWER_NOW
    elif c.verdict == INCONCLUSIVE:
        verdict = UNDECIDED
    else:
        verdict = NO_GAIN
    return Gain(
        gain, low, high, verdict, _prediction(predicted_s, predicted_kind, low, high), kept,
        dict(Counter(without)), dict(Counter(with_knob)),
    )  # fmt: skip


def _prediction(
    predicted: float | None, kind: str | None, low: float | None, high: float | None
) -> str | None:
    if predicted is None or low is None or high is None:
        return None
    if kind == "upper_bound":
        return HOLDS if low <= predicted else EXCEEDED
    if predicted > high:
        return ABOVE
    return BELOW if predicted < low else WITHIN


def gain_json(g: Gain) -> dict[str, object]:
    return round_ns(
        {
            "gain_s": g.gain_s,
            "ci_low_s": g.ci_low_s,
            "ci_high_s": g.ci_high_s,
            "verdict": g.verdict,
            "prediction": g.prediction,
            "outcome_kept": g.outcome_kept,
            "outcomes_without": g.outcomes_without,
            "outcomes_with": g.outcomes_with,
        }
    )
