"""The supply relay's contacts: actuation delay and contact bounce (pure)."""

from __future__ import annotations

import numpy as np

from simboard.profile import PowerSpec


def bounce_s(rng: np.random.Generator, spec: PowerSpec) -> np.ndarray:
    """Rail transitions of one closing, seconds from first contact: rise, fall, ..., rise.

    The last rise is the true power edge (the rail stays high from there). Every gap is
    shorter than the burst, which is at most 1 ms (the profile validation caps it).
    """
    opens = int(rng.integers(spec.bounce_opens[0], spec.bounce_opens[1] + 1))
    duration = float(rng.uniform(*spec.bounce_ms)) * 1e-3
    if opens == 0 or duration <= 0.0:
        return np.zeros(1)
    weights = rng.uniform(0.2, 1.0, size=2 * opens)
    gaps = weights / weights.sum() * duration
    return np.concatenate([[0.0], np.cumsum(gaps)])
