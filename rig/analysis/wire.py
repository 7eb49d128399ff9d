"""When each console byte was sent (the UART tap's start bit, else the host read that
carried it), and how long the console was busy sending some. A read arrives after its
last byte: a byte inside it left a character time per later byte before (none when
unpaced, `rig.analysis.pacing`'s verdict).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from rig.analysis.events import Timebase
from rig.analysis.lines import Line
from rig.analysis.pacing import char_time_s, read_units
from rig.analysis.parsers.text import console_bytes
from rig.model import Chunk
from rig.model.uart import UartBytes


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
    ends, t = read_units(chunks)
    total = int(ends[-1]) if len(ends) else 0
    mask = np.zeros(total + 1, np.int64)
    for i in indices:
        a = min(lines[i].offset, total)
        mask[a] += 1
        mask[min(a + console_bytes(lines, i), total)] -= 1
    inside = np.cumsum(mask)[:total] > 0
    nbytes = int(inside.sum())
    wire = nbytes * char_time_s(baud)
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
        ends, t = read_units(chunks)
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
