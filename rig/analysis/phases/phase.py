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

from rig.analysis.events import Timebase
from rig.analysis.lines import Line
from rig.analysis.timing import span
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
        """From line `a` to line `b`; `minus`: without the console time in between."""
        s = span(self.lines, a, b, self.tb, self.char_s, minus)
        observed = span(self.lines, a, b, self.tb, self.char_s, False).duration_s
        offsets = (self.lines[a].offset, self.lines[b].offset)
        return Phase(
            stage, kind, name, a, b, s.start.t_s, s.duration_s, observed, "measured", s.source,
            s.uncertainty_s, detail, offsets,
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
