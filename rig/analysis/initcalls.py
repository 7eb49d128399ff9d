"""Initcalls and modules on the power-on time base, from initcall_debug lines: each starts
at its `calling` line and lasts what the kernel measured; calls and returns pair by
(async cookie, symbol, module), innermost first (docs/analysis.md, "Initcalls").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.events import Timebase
from rig.analysis.lines import Line
from rig.analysis.parsers.initcall import AsyncWait, InitcallLine
from rig.analysis.timing import When, kernel_at
from rig.model import report as model
from rig.model import sections
from rig.model.sections import ModuleTime


@dataclass(frozen=True)
class Initcall:
    call: InitcallLine | None  # None when only the return line survived
    ret: InitcallLine | None  # None when the call never returned (within the log)
    start: When
    #: From the calling line's printk stamp to the return line's: the kernel's printk
    #: clock, what scripts/bootgraph.pl draws. `after N usecs` is ktime, which before
    #: the clocksource switch (fs_initcall) only advances by jiffies.
    printk_span_s: float | None = None

    @property
    def rec(self) -> InitcallLine:
        rec = self.call or self.ret
        assert rec is not None
        return rec

    @property
    def duration_s(self) -> float | None:
        return self.ret.usecs / 1e6 if self.ret and self.ret.usecs is not None else None

    def to_model(self) -> model.Initcall:
        r = self.rec
        return model.Initcall(
            name=r.name,
            function=r.function,
            module=r.module,
            start_s=self.start.t_s,
            duration_s=self.duration_s,
            printk_span_s=self.printk_span_s,
            return_code=self.ret.ret if self.ret else None,
            source=self.start.source,
            uncertainty_s=self.start.uncertainty_s,
            async_cookie=r.cookie,
            pid=self.call.pid if self.call else None,
            line=self.call.line if self.call else None,
            end_line=self.ret.line if self.ret else None,
            returned=self.ret is not None,
        )


def _key(r: InitcallLine) -> tuple[int | None, str, str | None]:
    return (r.cookie, r.name, r.module)


def pair_initcalls(
    records: Sequence[InitcallLine | AsyncWait], lines: Sequence[Line], tb: Timebase
) -> list[Initcall]:
    """Initcalls in the order they were called (orphan returns where they returned)."""
    open_: dict[tuple[int | None, str, str | None], list[int]] = {}
    out: list[Initcall] = []
    for r in records:
        if not isinstance(r, InitcallLine):
            continue
        if r.call:
            open_.setdefault(_key(r), []).append(len(out))
            out.append(Initcall(r, None, kernel_at(lines[r.line], tb)))
            continue
        stack = open_.get(_key(r))
        if stack:
            i = stack.pop()
            call = out[i].call
            assert call is not None
            a, b = lines[call.line].printk_ts, lines[r.line].printk_ts
            printk_span = b - a if a is not None and b is not None else None
            out[i] = Initcall(call, r, out[i].start, printk_span)
        else:
            # The calling line was lost (garbled console): it started `usecs` before.
            end = kernel_at(lines[r.line], tb)
            t = end.t_s - (r.usecs or 0) / 1e6
            out.append(Initcall(None, r, When(t, end.source, end.uncertainty_s)))
    return out


def module_breakdown(calls: Sequence[Initcall]) -> list[ModuleTime]:
    """Time per module (built-in initcalls together under `module: null`), slowest first."""
    groups: dict[str | None, list[Initcall]] = {}
    for c in calls:
        groups.setdefault(c.rec.module, []).append(c)
    rows = [
        ModuleTime(
            module=mod,
            initcalls=len(cs),
            duration_s=sum(c.duration_s or 0.0 for c in cs),
            start_s=min(c.start.t_s for c in cs),
            source=cs[0].start.source,
            slowest=max(cs, key=lambda c: c.duration_s or 0.0).rec.function,
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
