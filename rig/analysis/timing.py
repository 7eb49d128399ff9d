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
from rig.model.report import Event, Evidence


@dataclass(frozen=True)
class Span:
    start: Event
    duration_s: float
    source: str
    uncertainty_s: float


def kernel_at(line: Line, tb: Timebase) -> Event:
    """Like `line_event`, but a stamped line without a printk fit keeps its printk time,
    marked `printk_relative` (not on the reference clock: no uncertainty), rather than
    the coarser host arrival."""
    if line.printk_ts is not None and tb.printk is None:
        return Event("line", line.printk_ts, "printk_relative", None)
    return line_event("line", line, tb)


def span(
    lines: Sequence[Line], a: int, b: int, tb: Timebase, char_s: float, minus_console: bool
) -> Span:
    """From the first byte of line `a` to the first byte of line `b`; `minus_console`
    takes out the bytes' wire time in between, leaving the work the line announced."""
    la, lb = lines[a], lines[b]
    ea, eb = line_event("a", la, tb), line_event("b", lb, tb)
    if la.printk_ts is not None and lb.printk_ts is not None and tb.printk is None:
        # No fit, but both ends on the kernel clock: their difference is still good.
        d, source, u = lb.printk_ts - la.printk_ts, "printk", PRINTK_RESOLUTION_S
    else:
        d, u = eb.t_s - ea.t_s, interval_uncertainty(ea, eb)
        source = ea.source if ea.source == eb.source else f"{ea.source}+{eb.source}"
    if minus_console:
        d -= (lb.offset - la.offset) * char_s
    return Span(ea, max(d, 0.0), source, u)


def evidence(lines: Sequence[Line], index: int, tb: Timebase) -> Evidence:
    """One line of evidence for an advisory or a phase: index, text, reference time."""
    w = line_event("", lines[index], tb)
    return Evidence(index, lines[index].text[:200], w.t_s, w.source)
