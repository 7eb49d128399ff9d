"""What the board draws from its supply during one boot (pure: no clocks, no I/O).

Times are true seconds from the boot's power edge. The draw is a level per stage (the
profile's `current_a`), an inrush at the edge (the board's bulk capacitors charging,
decaying exponentially) and a slow activity wobble (three seeded sines, at most
`ripple` of the level), clamped at the supply's current limit. The terminal voltage is
the set-point less the supply's output resistance times the current. Readback noise is
the supply's business (simboard.supply), not the board's: truth has none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simboard.profile import Profile

#: Seed stream of the wobble (the timeline uses 1, the board 2 and 3, faults 4 and 5).
_WOBBLE = 6
#: The wobble's frequencies (Hz): CPU load changing with what the boot is doing.
WOBBLE_HZ = (3.0, 40.0)
#: Integration step of the truth (s): far below the inrush time constant and the wobble.
STEP_S = 20e-6


@dataclass(frozen=True, eq=False)
class Rail:
    starts: np.ndarray  # when each level begins (s), ascending, starts[0] = 0
    levels: np.ndarray  # A
    inrush_a: float
    inrush_s: float
    ripple: float
    freqs: np.ndarray
    phases: np.ndarray
    volts: float  # set-point
    limit_a: float
    ohm: float
    cut_s: float  # the rail fell (inf: still up)
    idle_v: float  # terminal voltage while the board is unpowered (output on or off)

    def amps(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        idx = np.clip(np.searchsorted(self.starts, t, side="right") - 1, 0, len(self.levels) - 1)
        level = self.levels[idx]
        wob = np.zeros_like(t)
        for f, ph in zip(self.freqs, self.phases, strict=True):
            wob += np.sin(2 * math.pi * f * t + ph)
        a = level * (1.0 + self.ripple * wob / len(self.freqs))
        if self.inrush_a > 0 and self.inrush_s > 0:
            a += self.inrush_a * np.exp(-np.maximum(t, 0.0) / self.inrush_s)
        a = np.minimum(a, self.limit_a)
        return np.where((t >= 0) & (t < self.cut_s), a, 0.0)

    def volts_at(self, t: np.ndarray, a: np.ndarray | None = None) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        a = self.amps(t) if a is None else a
        powered = (t >= 0) & (t < self.cut_s)
        return np.where(powered, self.volts - self.ohm * a, self.idle_v)

    def mean(self, t0: float, t1: float) -> tuple[float, float]:
        """Mean current and voltage over [t0, t1]: what an averaging readback sees."""
        if t1 <= t0:
            t = np.array([t0])
        else:
            n = int(min(20000, max(8, math.ceil((t1 - t0) / STEP_S))))
            t = t0 + (np.arange(n) + 0.5) * ((t1 - t0) / n)  # midpoints
        a = self.amps(t)
        return float(a.mean()), float(self.volts_at(t, a).mean())

    def energy(self, t0: float, t1: float) -> float:
        """Joules delivered over [t0, t1] (composite Simpson on a fine grid, split at the
        level changes and the edge so no step falls inside a Simpson panel)."""
        cuts = [t0, *[s for s in (*self.starts, 0.0, self.cut_s) if t0 < s < t1], t1]
        total = 0.0
        for a, b in zip(sorted(cuts), sorted(cuts)[1:], strict=False):
            if b <= a:
                continue
            n = 2 * max(1, math.ceil((b - a) / STEP_S / 2))
            # Just inside the piece: a level change at its ends belongs to one side only.
            eps = (b - a) * 1e-9
            t = np.linspace(a + eps, b - eps, n + 1)
            amps = self.amps(t)
            p = amps * self.volts_at(t, amps)
            w = np.ones(n + 1)
            w[1:-1:2], w[2:-1:2] = 4.0, 2.0
            total += float((w * p).sum()) * (b - a) / (3 * n)
        return total


def rail(
    profile: Profile,
    seed: int | None,
    boot_index: int,
    stage_ends: list[float],
    volts: float,
    limit_a: float,
    cut_s: float,
    idle_v: float,
) -> Rail:
    """The rail of boot `boot_index`; `stage_ends`: the ends of the stages it completed
    (a halted boot keeps the level of the stage it stopped in; after the last stage the
    application's level goes on)."""
    s = profile.supply
    levels = [st.current_a for st in profile.stages]
    starts = [0.0, *stage_ends][: len(levels)]
    rng = np.random.default_rng([seed, boot_index, _WOBBLE] if seed is not None else None)
    return Rail(
        starts=np.asarray(starts, dtype=np.float64),
        levels=np.asarray(levels[: len(starts)], dtype=np.float64),
        inrush_a=s.inrush_a,
        inrush_s=s.inrush_ms * 1e-3,
        ripple=s.ripple,
        freqs=rng.uniform(*WOBBLE_HZ, size=3),
        phases=rng.uniform(0.0, 2 * math.pi, size=3),
        volts=volts,
        limit_a=limit_a,
        ohm=s.output_ohm,
        cut_s=cut_s,
        idle_v=idle_v,
    )
