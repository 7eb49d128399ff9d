"""Was the console paced at its baud rate? One verdict a report, told from the bytes.

Over any stretch of reads, paced bytes (10/baud s each, 8N1) cannot outrun the baud rate
by more than the adapter and the host held back. When they do (an emulated UART, a USB
gadget console, a faster line), no console cost may be claimed from them. The verdict is
taken from the tapped UART when there is one, else from the host's reads; the host clock
and the console analysis read this one verdict (docs/analysis.md, "Console pacing").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rig.model import Chunk
from rig.model.clocks import Pacing
from rig.model.uart import UartBytes

#: Beyond the latency band the host clock measured: the reader stamps a read after its
#: first byte and takes what else is waiting a moment later.
PACING_FLOOR_S = 0.005
#: No USB-serial adapter at its defaults holds bytes longer (FTDI's timer is 16 ms): a
#: wider host band is the console's own timing folded in, not latency.
MAX_LATENCY_S = 0.032
#: Before any band is known, latency and late reads may explain this much lead.
FIRST_SLACK_S = MAX_LATENCY_S + PACING_FLOOR_S
#: UARTs run within a few percent of their nominal rate; allow this much faster.
RATE_TOLERANCE = 0.05
#: Evidence of pacing: a stretch of at least this many slacks of wire time that took
#: no more than DENSE times its wire time to arrive (the line ran near its rate).
DENSE_SLACKS = 3.0
DENSE = 1.5


#: An 8N1 character on the wire: start bit, 8 data bits, stop bit.
BITS_PER_CHAR = 10


def char_time_s(baud: int) -> float:
    """Seconds one character takes on the wire at `baud` (0 when the rate is unknown)."""
    return BITS_PER_CHAR / baud if baud > 0 else 0.0


def wire_char_s(p: Pacing) -> float:
    """Character time per byte on the wire: none when the console is not paced.
    Unknown pacing keeps it for subtracting console time from phases (a serial
    line's bytes do take it), but claims no console cost from it."""
    return char_time_s(p.baud) if p.verdict != "unpaced" else 0.0


def pacing_note(p: Pacing) -> str | None:
    if p.verdict == "unpaced" and p.window:
        a, b = p.window
        return (
            f"console not paced at {p.baud} baud: bytes {a}-{b} arrived "
            f"{p.deficit_s:.3f} s sooner than the baud rate allows (more than the "
            f"{p.slack_s:.3f} s latency and late reads explain); no console cost is "
            "claimed and no console time is subtracted from phases"
        )
    if p.verdict == "unknown" and p.bytes:
        return (
            f"console pacing unknown: no stretch of the {p.bytes} bytes was busy "
            f"enough to show whether they took 10/{p.baud} s each; no console cost "
            "is claimed"
        )
    return None


def read_units(chunks: Sequence[Chunk]) -> tuple[np.ndarray, np.ndarray]:
    """End offset (exclusive) and arrival (s) of each non-empty read."""
    sizes = np.array([len(c.data) for c in chunks], np.int64)
    keep = sizes > 0
    ends = np.cumsum(sizes)[keep]
    t = np.array([c.t_ns for c in chunks], np.float64)[keep] / 1e9
    return ends, t


def band_slack(high_s: float, low_s: float) -> float:
    """The lead a host band of [low_s, high_s] explains (capped at any adapter's)."""
    return min(high_s - low_s, MAX_LATENCY_S) + PACING_FLOOR_S


def _fastest(ends: np.ndarray, t: np.ndarray, c: float, slack: float) -> float | None:
    """Bytes per second of the fastest stretch needing DENSE_SLACKS slacks of wire time
    (the shortest such stretch ending at each read is the one to check); None when no
    stretch is that long or every one arrived within a single read."""
    need = DENSE_SLACKS * slack / c  # bytes
    i = np.searchsorted(ends, ends - need, side="right") - 1
    ok = i >= 0
    if not ok.any():
        return None
    j = np.nonzero(ok)[0]
    i = i[ok]
    dt = t[j] - t[i]
    timed = dt > 0
    if not timed.any():
        return None
    return float(np.max((ends[j] - ends[i])[timed] / dt[timed]))


def _verdict(
    ends: np.ndarray, t: np.ndarray, baud: int, slack: float
) -> tuple[str, float, tuple[int, int], float | None]:
    c = char_time_s(baud)
    # Read j's bytes left no earlier than read i's last one plus their own wire time:
    # lead(i, j) = (ends[j] - ends[i]) * c - (t[j] - t[i]) <= what was held back.
    v = ends * c * (1 - RATE_TOLERANCE) - t
    lead = v[1:] - np.minimum.accumulate(v)[:-1]
    j = int(np.argmax(lead)) + 1
    deficit = float(lead[j - 1])
    window = (int(ends[int(np.argmin(v[:j]))]), int(ends[j]))
    rate = _fastest(ends, t, c, slack)
    if deficit > slack:
        return "unpaced", deficit, window, rate
    # Paced: a long stretch ran near the line rate (within DENSE) and still took its time.
    verdict = "paced" if rate is not None and rate * c * DENSE >= 1 else "unknown"
    return verdict, max(deficit, 0.0), window, rate


def assess_pacing(
    chunks: Sequence[Chunk],
    baud: int,
    slack_s: float = FIRST_SLACK_S,
    uart: UartBytes | None = None,
) -> Pacing:
    """Paced, unpaced, or unknown (no stretch busy enough to tell). `slack_s`: the lead
    the host's reads can explain (`band_slack` once the host band is known); the tapped
    line, when given, replaces the reads and needs only its sampling as slack."""
    ends, t = read_units(chunks)
    n = int(ends[-1]) if len(ends) else 0
    wire = n * char_time_s(baud)
    span = float(t[-1] - t[0]) if len(t) else 0.0
    source = "reads"
    if uart is not None and len(uart.data) >= 2 and uart.samplerate:
        # Exact times: only the sampling and the start bit's own edge can blur them.
        ends = np.arange(1, len(uart.data) + 1, dtype=np.int64)
        t = uart.start.astype(np.float64) / uart.samplerate
        slack_s, source = 3 / uart.samplerate, "uart"
    line_rate = baud / BITS_PER_CHAR if baud > 0 else None
    if baud <= 0 or len(t) < 2:
        return Pacing("unknown", source, baud, n, wire, span, 0.0, slack_s, None, None, line_rate)
    verdict, deficit, window, rate = _verdict(ends, t, baud, slack_s)
    return Pacing(
        verdict, source, baud, n, wire, span, deficit, slack_s, list(window), rate, line_rate
    )
