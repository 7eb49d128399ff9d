"""Mapping serial arrival times (host clock) onto the reference clock.

A line's bytes reach the host after they left the target: USB-serial latency is never
negative. Over anchor lines whose reference time is known, the delay d = arrival - t
spans [offset + smallest latency, offset + largest latency]; a line known only by its
arrival is placed in the middle of that band, with half its width (plus one character
time) as its uncertainty.

n anchors see less than the whole band (a latency timer makes latency roughly uniform),
so the observed band is widened until a new line falls inside it with 99 % probability
under that model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Without anchors (console-only runs) the adapter's latency is unknown; FTDI's default
#: latency timer is 16 ms, so assume a band that wide.
DEFAULT_BAND_S = 16e-3
#: Probability that a line's latency falls outside the stated band.
MISS = 0.01
#: An anchor delayed by more than this many estimated bands is not USB latency.
OUTLIER_BANDS = 2.0


@dataclass(frozen=True)
class HostMap:
    low_s: float  # smallest arrival - reference delay seen (seconds)
    high_s: float  # largest
    anchors: int
    char_s: float  # one character time at the console baud rate
    latencies_s: tuple[float, ...] = ()  # each kept anchor's delay above the least one
    rejected: int = 0  # anchors too late to be USB latency (queued, or read late)

    @property
    def uncertainty_s(self) -> float:
        return (self.high_s - self.low_s) / 2 + self.char_s

    def to_ref(self, t_ns: int) -> float:
        return t_ns / 1e9 - (self.low_s + self.high_s) / 2

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": "ref = arrival_s - delay, delay in [low_s, high_s] (latency >= 0)",
            "low_s": self.low_s,
            "high_s": self.high_s,
            "spread_s": self.high_s - self.low_s,
            "anchors": self.anchors,
            "rejected": self.rejected,
            "latencies_s": list(self.latencies_s),
            "uncertainty_s": self.uncertainty_s,
        }


def fit_host(pairs: Sequence[tuple[int, float]], char_s: float) -> HostMap | None:
    """`pairs`: (arrival host ns, reference time of the line's first byte)."""
    if not pairs:
        return None
    delays = sorted(t_ns / 1e9 - ref for t_ns, ref in pairs)
    low, total = delays[0], len(delays)
    excess = delays[len(delays) // 2] - low
    if len(delays) >= 5 and excess > char_s:
        # Lines queued behind others on the target, or read late by a busy host, sit far
        # above the USB band; the median excess (half the band, for uniform latency) is
        # what tells them apart.
        delays = [d for d in delays if d - low <= OUTLIER_BANDS * 2 * excess]
    high, n = delays[-1], len(delays)
    seen = tuple(d - low for d in delays)
    if n < 3:
        return HostMap(low, low + DEFAULT_BAND_S, n, char_s, seen, total - n)
    # For n uniform samples the gap below the minimum is Beta(1, n) distributed: widen each
    # side by c * width, where a new sample lands beyond it with probability MISS / 2.
    width = (high - low) * (n + 1) / (n - 1)
    c = 1 - (MISS / 2 * (n + 1)) ** (1 / (n + 1))
    return HostMap(low - c * width, high + c * width, n, char_s, seen, total - n)


def host_only(power_on_ns: int, char_s: float) -> HostMap:
    """Console-only runs: t = 0 at the power-on command, latency band assumed."""
    base = power_on_ns / 1e9
    return HostMap(base, base + DEFAULT_BAND_S, 0, char_s)
