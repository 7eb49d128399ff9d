"""The `Timer` that times a boot stage's sub-phases (`rig.model.sections.Phase`).

A phase lasts only as long as its evidence shows: from the byte that announced the work
to the byte that reported it done (`Verifying Checksum ... ` -> `OK`), or between two
lines that both belong to it (`calling` -> `initcall ... returned`). The silence after
a line that reported a result is not that line's work (`rig.analysis.silence` lists it as
unattributed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rig.analysis.clockfit import PRINTK_RESOLUTION_S
from rig.analysis.events import Timebase, interval_uncertainty, line_event
from rig.analysis.lines import Line
from rig.analysis.wire import ByteClock
from rig.model.sections import Phase


@dataclass(frozen=True)
class Timer:
    """Times phases between console lines and bytes of one boot."""

    lines: Sequence[Line]
    tb: Timebase
    char_s: float  # per byte on the wire; 0 when the console is not paced
    clock: ByteClock

    def between(
        self, stage: str, kind: str, name: str, a: int, b: int, minus: bool, **detail: Any
    ) -> Phase:
        """From the first byte of line `a` to the first byte of line `b` (a clock's shared
        offset cancels); `minus`: without the console time in between, leaving the work
        the line announced."""
        la, lb = self.lines[a], self.lines[b]
        ea, eb = line_event("a", la, self.tb), line_event("b", lb, self.tb)
        if la.printk_ts is not None and lb.printk_ts is not None and self.tb.printk is None:
            # No fit, but both ends on the kernel clock: their difference is still good.
            d, source, u = lb.printk_ts - la.printk_ts, "printk", PRINTK_RESOLUTION_S
        else:
            d, u = eb.t_s - ea.t_s, interval_uncertainty(ea, eb)
            source = ea.source if ea.source == eb.source else f"{ea.source}+{eb.source}"
        work = d - (lb.offset - la.offset) * self.char_s if minus else d
        return Phase(
            stage, kind, name, a, b, ea.t_s, max(work, 0.0), max(d, 0.0), "measured", source, u,
            detail, (la.offset, lb.offset),
        )  # fmt: skip

    def bytes(
        self, stage: str, kind: str, name: str, a: int, b: int, line: int, **detail: Any
    ) -> Phase:
        """From byte `a` (the last one announcing the work) to byte `b` (the first one
        after it), without the wire time of `a` and the bytes between."""
        ta = self.clock.at(a)[0]
        d, source, u = self.clock.gap(a, b)
        observed = self.clock.at(b)[0] - ta
        end_line = _line_of(self.lines, b)
        return Phase(
            stage, kind, name, line, end_line, ta + self.char_s, d, max(observed, d), "measured",
            source, u, detail, (a, b),
        )  # fmt: skip

    def line_end(self, i: int) -> int | None:
        """Offset of line `i`'s last byte (its LF), None for an unterminated last line."""
        return self.lines[i + 1].offset - 1 if i + 1 < len(self.lines) else None


def _line_of(lines: Sequence[Line], offset: int) -> int:
    lo, hi = 0, len(lines) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if lines[mid].offset <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo
