"""Is the console paced at its baud rate? Told from the bytes' own timing.

A real UART sends 10 bits a byte (8N1): n bytes need n * 10 / baud seconds on the wire,
and the host's arrival stamps can squeeze that by no more than the adapter's latency.
A console that delivered bytes faster than that (QEMU's PL011, a pty, a network
console) is not paced: the target never waits there for earlier bytes to drain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rig.analysis.lines import Line

#: The most USB-serial latency can squeeze arrivals together (an FTDI latency timer is
#: 16 ms by default; twice that for margin).
SLACK_S = 32e-3
#: Bytes this much faster than the line rate, even granting SLACK_S: not paced.
UNPACED_RATIO = 1.5
#: A stretch at this fraction of the line rate shows a console that ran near it.
BUSY_RATIO = 0.7


@dataclass(frozen=True)
class Pacing:
    verdict: str  # "paced" | "unpaced" | "unknown"
    ratio: float  # densest window: its bytes' wire time over (its span + SLACK_S)
    window_bytes: int
    window_s: float
    line_bytes_per_s: float  # baud / 10
    busy: float = 0.0  # busiest stretch of at least SLACK_S: bytes per second / line rate

    @property
    def paced(self) -> bool:
        return self.verdict == "paced"

    def as_dict(self) -> dict[str, Any]:
        span = self.window_s
        return {
            "verdict": self.verdict,
            "ratio": self.ratio,
            "busy": self.busy,
            "window_bytes": self.window_bytes,
            "window_s": span,
            "bytes_per_s": self.window_bytes / span if span > 0 else None,
            "line_bytes_per_s": self.line_bytes_per_s,
            "slack_s": SLACK_S,
        }


def detect_pacing(lines: Sequence[Line], char_s: float) -> Pacing:
    """Paced, the first byte of line j left at least (off_j - off_i) character times
    after that of line i, so arrivals satisfy t_j - t_i >= bytes * char_s - latency:
    the ratio bytes * char_s / (t_j - t_i + SLACK_S) stays at or below 1. A console that
    also ran near its line rate for a while (`busy`) is paced; one that never did may be
    either."""
    rate = 1 / char_s if char_s > 0 else float("inf")
    if len(lines) < 2 or char_s <= 0:
        return Pacing("unknown", 0.0, 0, 0.0, rate)
    off = np.array([ln.offset for ln in lines], dtype=np.float64)
    t = np.array([ln.t_ns for ln in lines], dtype=np.float64) / 1e9
    best, busy = (0.0, 0, 0.0), 0.0
    for i in range(len(lines) - 1):
        wire = (off[i + 1 :] - off[i]) * char_s
        span = np.maximum(t[i + 1 :] - t[i], 0.0)
        r = wire / (span + SLACK_S)
        j = int(np.argmax(r))
        if r[j] > best[0]:
            best = (float(r[j]), int(off[i + 1 + j] - off[i]), float(span[j]))
        # Over at least SLACK_S, latency can squeeze a stretch by half at most.
        long = span >= SLACK_S
        if long.any():
            busy = max(busy, float(np.max(wire[long] / span[long])))
    ratio, nbytes, span_s = best
    if ratio > UNPACED_RATIO:
        verdict = "unpaced"
    elif busy >= BUSY_RATIO:
        verdict = "paced"
    else:
        verdict = "unknown"
    return Pacing(verdict, ratio, nbytes, span_s, rate, busy)
