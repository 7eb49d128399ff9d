"""How late the host can have read each console line: the console reader's self-check
(run.json `console_reader`). Every read is late by at most `bound_s`, except those
stamped in a `held` window [from, until], late by at most `probe_s` + stamp - from: the
host clock takes those lines out of the latency band and lets them have left that much
earlier (docs/analysis.md, "The host clock"). Without the check: READ_JITTER_S.
"""

from __future__ import annotations

from collections.abc import Sequence

from rig.analysis.lines import Line
from rig.model.clocks import ReadBound
from rig.model.run import RunConsoleReader

#: Without the reader's own bound: a host's reader now and then wakes late, a rare tail
#: that widens what is stated without moving where lines are placed.
READ_JITTER_S = 1e-3


def assumed() -> ReadBound:
    """No reader's bound: READ_JITTER_S for every read."""
    return ReadBound(READ_JITTER_S, False, [], 0.0)


def read_late(reader: RunConsoleReader | None, lines: Sequence[Line]) -> ReadBound:
    """The lines whose first byte came in a read stamped inside a held window, each
    with how late that read may be (the earliest window's start counts)."""
    if reader is None or reader.bound_s is None:
        return assumed()
    hit: dict[int, float] = {}
    for ln in lines:
        froms = [a for a, until in reader.held if a < ln.t_ns <= until]
        if froms:
            hit[ln.index] = reader.probe_s + (ln.t_ns - min(froms)) / 1e9
    return ReadBound(reader.bound_s, True, sorted(hit), max(hit.values(), default=0.0), hit)
