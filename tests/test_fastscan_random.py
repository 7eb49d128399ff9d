"""Random captures built to hit the decoder's corners, fast engine against sigrok-cli.

Power edges land at and around the debounce time from each other, markers on and next
to power edges (inside debounce windows, in rejected pulses, before any power-up),
channels come in any order with aliases and busy extra lines, members are small.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rig.artifacts.markerlogic import debounce_samples
from rig.names import MARKERS
from tests.captures import make_capture
from tests.test_fastscan import same


def _power(rng: np.random.Generator, n: int, deb: int) -> list[int]:
    t = 0 if rng.random() < 0.2 else int(rng.integers(1, max(2, n // 4)))
    out = []
    while t < n and len(out) < 40:
        out.append(t)
        kind = rng.integers(0, 5)
        gap = [
            deb - 1,
            deb,
            deb + 1,
            int(rng.integers(1, deb + 2)),
            int(rng.integers(1, 4 * deb + 2)),
        ]
        t += max(1, gap[kind])
    return out


def _marker(rng: np.random.Generator, n: int, power: list[int]) -> list[int]:
    out = []
    for _ in range(int(rng.integers(0, 6))):
        if power and rng.random() < 0.5:
            out.append(int(rng.choice(power)) + int(rng.integers(-2, 3)))
        else:
            out.append(int(rng.integers(0, n + 1)))
    return sorted({x for x in out if 0 <= x < n})


@pytest.mark.parametrize("seed", range(60))
def test_random_capture_matches_sigrok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    rate = int(rng.choice([250_000, 1_000_000, 2_000_000, 3_000_000]))
    debounce_us = float(rng.choice([0.0, 10.0, 100.0, 333.3, 1000.0]))
    deb = debounce_samples(debounce_us, rate)
    n = int(rng.integers(1, 30_000))
    power = _power(rng, n, deb)
    toggles = {"power": power}
    for m in MARKERS:
        if rng.random() < 0.7:
            name = "init_post" if m == "kernel_init" and rng.random() < 0.3 else m
            toggles[name] = _marker(rng, n, power)
    if rng.random() < 0.5:
        toggles["uart_tx"] = sorted({int(x) for x in rng.integers(1, max(2, n), 50)})
    names = list(toggles)
    rng.shuffle(names)
    chunk = int(rng.integers(1, 5_000)) if rng.random() < 0.7 else None
    cap = make_capture(
        tmp_path / "c.sr",
        n,
        {k: toggles[k] for k in names},
        rate=rate,
        chunk=chunk,
        monkeypatch=monkeypatch,
    )
    same(cap, debounce_us)
