"""Times for parsed records: points and spans on the reference clock, from line indices
(a clock's shared offset cancels in a span; two printk stamps without a fit still give a
good difference on the kernel clock).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.clockfit import PRINTK_RESOLUTION_S
from rig.analysis.events import Timebase, interval_uncertainty, line_event
from rig.analysis.lines import Line
from rig.model.report import Evidence


@dataclass(frozen=True)
class When:
    t_s: float
    source: str  # printk | printk_relative | host
    uncertainty_s: float | None  # None: not on the reference clock (printk_relative)


@dataclass(frozen=True)
class Span:
    start: When
    duration_s: float
    source: str
    uncertainty_s: float


def at(line: Line, tb: Timebase) -> When:
    """Reference time of a line's first byte (its printk stamp when fitted)."""
    ev = line_event("line", line, tb)
    return When(ev.t_s, ev.source, ev.uncertainty_s)


def kernel_at(line: Line, tb: Timebase) -> When:
    """Like `at`, but a stamped line without a printk fit keeps its printk time, marked
    `printk_relative`, rather than the coarser host arrival."""
    if line.printk_ts is not None and tb.printk is None:
        return When(line.printk_ts, "printk_relative", None)
    return at(line, tb)


def span(
    lines: Sequence[Line], a: int, b: int, tb: Timebase, char_s: float, minus_console: bool
) -> Span:
    """From the first byte of line `a` to the first byte of line `b`; `minus_console`
    takes out the bytes' wire time in between, leaving the work the line announced."""
    la, lb = lines[a], lines[b]
    ea, eb = line_event("a", la, tb), line_event("b", lb, tb)
    start = When(ea.t_s, ea.source, ea.uncertainty_s)
    if la.printk_ts is not None and lb.printk_ts is not None and tb.printk is None:
        # No fit, but both ends on the kernel clock: their difference is still good.
        d, source, u = lb.printk_ts - la.printk_ts, "printk", PRINTK_RESOLUTION_S
    else:
        d, u = eb.t_s - ea.t_s, interval_uncertainty(ea, eb)
        source = ea.source if ea.source == eb.source else f"{ea.source}+{eb.source}"
    if minus_console:
        d -= (lb.offset - la.offset) * char_s
    return Span(start, max(d, 0.0), source, u)


def evidence(lines: Sequence[Line], index: int, tb: Timebase) -> Evidence:
    """One line of evidence for an advisory or a phase: index, text, reference time."""
    w = at(lines[index], tb)
    return Evidence(index, lines[index].text[:200], w.t_s, w.source)
