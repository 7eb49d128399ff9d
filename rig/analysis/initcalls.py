"""Initcalls and modules on the power-on time base, from initcall_debug lines: each starts
at its `calling` line and lasts what the kernel measured; calls and returns pair by
(async cookie, symbol, module), innermost first (docs/analysis.md, "Initcalls").
"""

from __future__ import annotations

from collections.abc import Sequence

from rig.analysis.events import Timebase, line_event
from rig.analysis.lines import Line
from rig.analysis.parsers.initcall import AsyncWait, InitcallLine
from rig.model import sections
from rig.model.report import Event, Initcall
from rig.model.sections import ModuleTime


def kernel_at(line: Line, tb: Timebase) -> Event:
    """Like `line_event`, but a stamped line without a printk fit keeps its printk time,
    marked `printk_relative` (not on the reference clock: no uncertainty), rather than
    the coarser host arrival."""
    if line.printk_ts is not None and tb.printk is None:
        return Event("line", line.printk_ts, "printk_relative", None)
    return line_event("line", line, tb)


def _key(r: InitcallLine) -> tuple[int | None, str, str | None]:
    return (r.cookie, r.name, r.module)


def _started(r: InitcallLine, at: Event, before_s: float = 0.0) -> Initcall:
    """The initcall `r` names, started `before_s` before the line's time `at`."""
    return Initcall(r.name, r.function, r.module, at.t_s - before_s, source=at.source,
                    uncertainty_s=at.uncertainty_s, async_cookie=r.cookie)  # fmt: skip


def pair_initcalls(
    records: Sequence[InitcallLine | AsyncWait], lines: Sequence[Line], tb: Timebase
) -> list[Initcall]:
    """Initcalls in the order they were called (orphan returns where they returned)."""
    open_: dict[tuple[int | None, str, str | None], list[Initcall]] = {}
    out: list[Initcall] = []
    for r in records:
        if not isinstance(r, InitcallLine):
            continue
        if r.call:
            c = _started(r, kernel_at(lines[r.line], tb))
            c.pid, c.line, c.returned = r.pid, r.line, False
            open_.setdefault(_key(r), []).append(c)
            out.append(c)
            continue
        if stack := open_.get(_key(r)):
            c = stack.pop()
            assert c.line is not None
            # From the calling line's printk stamp to the return line's: the kernel's
            # printk clock, what scripts/bootgraph.pl draws. `after N usecs` is ktime,
            # which before the clocksource switch (fs_initcall) only advances by jiffies.
            a, b = lines[c.line].printk_ts, lines[r.line].printk_ts
            c.printk_span_s = b - a if a is not None and b is not None else None
        else:
            # The calling line was lost (garbled console): it started `usecs` before.
            c = _started(r, kernel_at(lines[r.line], tb), (r.usecs or 0) / 1e6)
            out.append(c)
        c.duration_s = r.usecs / 1e6 if r.usecs is not None else None
        c.return_code = r.ret
        c.end_line = r.line
        c.returned = True
    return out


def module_breakdown(calls: Sequence[Initcall]) -> list[ModuleTime]:
    """Time per module (built-in initcalls together under `module: null`), slowest first."""
    groups: dict[str | None, list[Initcall]] = {}
    for c in calls:
        groups.setdefault(c.module, []).append(c)
    rows = [
        ModuleTime(
            module=mod,
            initcalls=len(cs),
            duration_s=sum(c.duration_s or 0.0 for c in cs),
            start_s=min(c.start_s for c in cs),
            source=cs[0].source,
            slowest=max(cs, key=lambda c: c.duration_s or 0.0).function,
        )
        for mod, cs in groups.items()
    ]
    return sorted(rows, key=lambda r: (-r.duration_s, r.module or ""))


def async_waits(
    records: Sequence[InitcallLine | AsyncWait], lines: Sequence[Line], tb: Timebase
) -> list[sections.AsyncWait]:
    """Where a thread blocked on async work (async_synchronize_*), with the kernel's measure."""
    out = []
    for r in records:
        if isinstance(r, AsyncWait) and not r.waiting and r.usecs is not None:
            end = kernel_at(lines[r.line], tb)
            out.append(
                sections.AsyncWait(
                    r.pid, end.t_s - r.usecs / 1e6, r.usecs / 1e6, end.source, r.line
                )
            )
    return out
