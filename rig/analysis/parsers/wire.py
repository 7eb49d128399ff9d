"""When each console byte was sent, and whether the console was paced at its baud rate.

Byte times, best first: the UART tap (the byte's start bit on the analyzer clock), then
the host read that carried it (the chunk's arrival through the host clock band). A
host read arrives after its last byte, so on a paced line a byte inside it is placed one
character time per later byte before the arrival; on an unpaced console, at the arrival.

Pacing: on a serial line each byte takes 10/baud s (8N1). Over any stretch of reads, the
bytes received cannot outrun that by more than the adapter and the host held back (a
USB latency timer, a late read). When they do, the console is not paced at that rate
(an emulated UART, a USB gadget console, a faster line than configured): its bytes cost
the boot nothing like 10/baud each, and no console cost may be claimed from them.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rig.analysis.events import Timebase
from rig.analysis.lines import Line
from rig.analysis.parsers.text import console_bytes
from rig.artifacts.uart import UartBytes
from rig.model import Chunk

#: Beyond the latency band the host clock measured: the reader stamps a read after its
#: first byte and takes what else is waiting a moment later.
PACING_FLOOR_S = 0.005
#: No USB-serial adapter at its defaults holds bytes longer (FTDI's timer is 16 ms): a
#: wider host band is the console's own timing folded in, not latency.
MAX_LATENCY_S = 0.032
#: UARTs run within a few percent of their nominal rate; allow this much faster.
RATE_TOLERANCE = 0.05
#: Evidence of pacing: a stretch of at least this many slacks of wire time that took
#: no more than DENSE times its wire time to arrive (the line ran near its rate).
DENSE_SLACKS = 3.0
DENSE = 1.5


@dataclass(frozen=True)
class Pacing:
    verdict: str  # "paced" | "unpaced" | "unknown" (no stretch busy enough to tell)
    baud: int
    bytes: int
    wire_s: float  # what the baud rate needs for every byte
    span_s: float  # first read to last read
    deficit_s: float  # the most any stretch of bytes arrived ahead of the baud rate
    slack_s: float  # how far ahead latency and late reads can explain
    window: tuple[int, int] | None  # byte offsets of that stretch

    @property
    def char_s(self) -> float:
        """Character time per byte on the wire: none when the console is not paced.
        Unknown pacing keeps it for subtracting console time from phases (a serial
        line's bytes do take it), but claims no console cost from it."""
        return 10 / self.baud if self.baud > 0 and self.verdict != "unpaced" else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "baud": self.baud,
            "bytes": self.bytes,
            "wire_s": self.wire_s,
            "span_s": self.span_s,
            "deficit_s": self.deficit_s,
            "slack_s": self.slack_s,
            "window": list(self.window) if self.window else None,
        }

    def note(self) -> str | None:
        if self.verdict == "unpaced" and self.window:
            a, b = self.window
            return (
                f"console not paced at {self.baud} baud: bytes {a}-{b} arrived "
                f"{self.deficit_s:.3f} s sooner than the baud rate allows (more than the "
                f"{self.slack_s:.3f} s latency and late reads explain); no console cost is "
                "claimed and no console time is subtracted from phases"
            )
        if self.verdict == "unknown" and self.bytes:
            return (
                f"console pacing unknown: no stretch of the {self.bytes} bytes was busy "
                f"enough to show whether they took 10/{self.baud} s each; no console cost "
                "is claimed"
            )
        return None


def _units(chunks: Sequence[Chunk]) -> tuple[np.ndarray, np.ndarray]:
    """End offset (exclusive) and arrival (s) of each non-empty read."""
    sizes = np.array([len(c.data) for c in chunks], np.int64)
    keep = sizes > 0
    ends = np.cumsum(sizes)[keep]
    t = np.array([c.t_ns for c in chunks], np.float64)[keep] / 1e9
    return ends, t


def _dense(ends: np.ndarray, t: np.ndarray, c: float, slack: float) -> bool:
    """Some stretch needing DENSE_SLACKS slacks of wire time arrived within DENSE times
    that: the shortest such stretch ending at each read is the one to check."""
    need = DENSE_SLACKS * slack / c  # bytes
    i = np.searchsorted(ends, ends - need, side="right") - 1
    ok = i >= 0
    if not ok.any():
        return False
    j = np.nonzero(ok)[0]
    i = i[ok]
    return bool(np.any(t[j] - t[i] <= DENSE * (ends[j] - ends[i]) * c))


def _verdict(
    ends: np.ndarray, t: np.ndarray, baud: int, slack: float
) -> tuple[str, float, tuple[int, int] | None]:
    c = 10 / baud
    # Read j's bytes left no earlier than read i's last one plus their own wire time:
    # lead(i, j) = (ends[j] - ends[i]) * c - (t[j] - t[i]) <= what was held back.
    v = ends * c * (1 - RATE_TOLERANCE) - t
    lead = v[1:] - np.minimum.accumulate(v)[:-1]
    j = int(np.argmax(lead)) + 1
    deficit = float(lead[j - 1])
    window = (int(ends[int(np.argmin(v[:j]))]), int(ends[j]))
    if deficit > slack:
        return "unpaced", deficit, window
    return ("paced" if _dense(ends, t, c, slack) else "unknown"), max(deficit, 0.0), window


def assess_pacing(
    chunks: Sequence[Chunk], baud: int, tb: Timebase, uart: UartBytes | None = None
) -> Pacing:
    """Paced, unpaced, or unknown (no stretch busy enough to tell), from the tapped UART
    line when there is one (its start bits are the wire itself), else from the reads."""
    ends, t = _units(chunks)
    n = int(ends[-1]) if len(ends) else 0
    wire = n * 10 / baud if baud > 0 else 0.0
    span = float(t[-1] - t[0]) if len(t) else 0.0
    slack = min(tb.host.high_s - tb.host.low_s, MAX_LATENCY_S) + PACING_FLOOR_S
    if uart is not None and len(uart.data) >= 2 and uart.samplerate:
        # Exact times: only the sampling and the start bit's own edge can blur them.
        ends = np.arange(1, len(uart.data) + 1, dtype=np.int64)
        t = uart.start.astype(np.float64) / uart.samplerate
        slack = 3 / uart.samplerate
    if baud <= 0 or len(t) < 2:
        return Pacing("unknown", baud, n, wire, span, 0.0, slack, None)
    verdict, deficit, window = _verdict(ends, t, baud, slack)
    return Pacing(verdict, baud, n, wire, span, deficit, slack, window)


@dataclass(frozen=True)
class Busy:
    busy_s: float  # wire time of the bytes, never more than observed
    observed_s: float  # time over which the reads carrying them arrived
    wire_s: float  # what the baud rate implies for them
    bytes: int


def console_busy(
    chunks: Sequence[Chunk], lines: Sequence[Line], indices: Iterable[int], baud: int
) -> Busy:
    """How long the console was busy sending the bytes of `lines[indices]`: their wire
    time at 10/baud each, but never more than the reads carrying them took to arrive
    (each read counted from the one before it; the first read has none and counts 0)."""
    ends, t = _units(chunks)
    total = int(ends[-1]) if len(ends) else 0
    mask = np.zeros(total + 1, np.int64)
    for i in indices:
        a = min(lines[i].offset, total)
        mask[a] += 1
        mask[min(a + console_bytes(lines, i), total)] -= 1
    inside = np.cumsum(mask)[:total] > 0
    nbytes = int(inside.sum())
    wire = nbytes * 10 / baud if baud > 0 else 0.0
    if nbytes == 0 or len(ends) < 2:
        return Busy(0.0, 0.0, wire, nbytes)
    per = np.add.reduceat(inside.astype(np.int64), np.concatenate(([0], ends[:-1])))
    observed = float(np.diff(t)[per[1:] > 0].sum())
    return Busy(min(wire, observed), observed, wire, nbytes)


class ByteClock:
    """Reference time of any byte of the console stream (its start bit, or its read)."""

    def __init__(
        self,
        lines: Sequence[Line],
        chunks: Sequence[Chunk],
        tb: Timebase,
        char_s: float,
        uart: UartBytes | None = None,
    ) -> None:
        self.tb, self.char_s = tb, char_s
        self._starts = [ln.offset for ln in lines]
        self._lines = lines
        ends, t = _units(chunks)
        self._ends = [int(e) for e in ends]
        self._t_ns = [round(x * 1e9) for x in t]
        self._tap: dict[int, int] = {}  # line index -> tap index of its first byte
        if uart is not None and tb.uart and tb.samplerate and tb.power_sample is not None:
            for i, t_s in tb.uart.items():
                sample = round(t_s * tb.samplerate) + tb.power_sample
                k = int(np.searchsorted(uart.start, sample))
                if k < len(uart.data) and int(uart.start[k]) == sample:
                    self._tap[i] = k
        self._uart = uart

    def read_starts(self) -> list[int]:
        """Offsets where a read other than the first began: where pauses can show."""
        return self._ends[:-1]

    def _tapped(self, offset: int) -> float | None:
        i = bisect.bisect_right(self._starts, offset) - 1
        if i < 0 or i not in self._tap or self._uart is None:
            return None
        ln, k = self._lines[i], self._tap[i] + offset - self._starts[i]
        m = offset - ln.offset
        data = self._uart.data
        if k >= len(data) or (m < len(ln.raw) and data[k] != ln.raw[m]):
            return None
        if m >= len(ln.raw) and data[k] not in b"\r\n":
            return None
        assert self.tb.samplerate and self.tb.power_sample is not None
        return (int(self._uart.start[k]) - self.tb.power_sample) / self.tb.samplerate

    def at(self, offset: int) -> tuple[float, str, float]:
        """(time s, source "uart" | "host", uncertainty s) of the byte at `offset`."""
        tapped = self._tapped(offset)
        if tapped is not None:
            assert self.tb.samplerate
            return tapped, "uart", 1 / self.tb.samplerate
        k = min(bisect.bisect_right(self._ends, offset), len(self._ends) - 1)
        if k < 0 or not self._ends:
            ln = self._lines[bisect.bisect_right(self._starts, offset) - 1]
            return self.tb.host.to_ref(ln.t_ns), "host", self.tb.host.uncertainty_s
        later = max(self._ends[k] - 1 - offset, 0)
        t = self.tb.host.to_ref(self._t_ns[k]) - later * self.char_s
        return t, "host", self.tb.host.uncertainty_s

    def gap(self, a: int, b: int) -> tuple[float, str, float]:
        """Silence from byte `a` to byte `b` (> a): their time apart minus the wire time
        of `a` and the bytes between. Returns (seconds >= 0, source, uncertainty)."""
        ta, sa, ua = self.at(a)
        tb_, sb, ub = self.at(b)
        d = tb_ - ta - (b - a) * self.char_s
        if sa == sb == "uart":
            u = ua
        elif sa == sb == "host":
            # Both reads went through the same band: only their latencies differ.
            u = 2 * self.tb.host.uncertainty_s
        else:
            u = ua + ub
        return max(d, 0.0), sa if sa == sb else f"{sa}+{sb}", u
