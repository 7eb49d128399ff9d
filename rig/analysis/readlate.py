"""How late the host can have read each console line: the console reader's self-check
(run.json `console_reader`). Every read is late by at most `bound_s`, except those
stamped in a `held` window [from, until], late by at most `probe_s` + stamp - from: the
host clock takes those lines out of the latency band and lets them have left that much
earlier (docs/analysis.md, "The host clock"). Without the check: READ_JITTER_S.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rig.analysis.lines import Line
from rig.model.clocks import ReadBound
from rig.model.run import RunConsoleReader

#: Without the reader's own bound: a host's reader now and then wakes late, a rare tail
#: that widens what is stated without moving where lines are placed.
READ_JITTER_S = 1e-3


@dataclass(frozen=True)
class ReadLate:
    bound_s: float = READ_JITTER_S  # every read is late by at most this...
    #: ...except these lines' (index -> late by at most): the reader woke late for them
    lines: Mapping[int, float] = field(default_factory=dict)
    measured: bool = False  # the bound is the reader's own, not assumed

    def early(self, index: int) -> float:
        """How much before its stamp a line's read may have been ready, beyond what every
        read may be (the band holds that)."""
        return self.lines.get(index, 0.0)

    @property
    def worst_s(self) -> float:
        return max(self.lines.values(), default=0.0)

    def to_model(self) -> ReadBound:
        return ReadBound(self.bound_s, self.measured, sorted(self.lines), self.worst_s)


def read_late(reader: RunConsoleReader | None, lines: Sequence[Line]) -> ReadLate:
    """The lines whose first byte came in a read stamped inside a held window, each
    with how late that read may be (the earliest window's start counts)."""
    if reader is None or reader.bound_s is None:
        return ReadLate()
    hit: dict[int, float] = {}
    for ln in lines:
        froms = [a for a, until in reader.held if a < ln.t_ns <= until]
        if froms:
            hit[ln.index] = reader.probe_s + (ln.t_ns - min(froms)) / 1e9
    return ReadLate(reader.bound_s, hit, True)
