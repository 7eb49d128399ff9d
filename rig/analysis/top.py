"""The "where is the time going" table (after FreeBSD's TSLOG top-N): the slowest items
of every kind in one list, unattributed silences beside them. Items may nest, so the
column ranks, it does not add up (docs/analysis.md, "Where is the time going").
"""

from __future__ import annotations

from collections.abc import Sequence

from rig.model.report import Initcall, Silence, TopItem
from rig.model.sections import AsyncWait, ModuleTime, Phase


def initcall_s(c: Initcall) -> float | None:
    """The kernel's own measure, but never more than its calling and return lines
    allow: before the clocksource switch `usecs` moves in jiffies (a 0.5 ms call can
    read 4000 usecs), while the printk stamps around it keep their resolution."""
    d = c.duration_s
    if d is None or c.printk_span_s is None:
        return d
    return min(d, max(c.printk_span_s, 0.0))


def top_table(
    calls: Sequence[Initcall],
    modules: Sequence[ModuleTime],
    phases: Sequence[Phase],
    waits: Sequence[AsyncWait],
    n: int,
    unattributed: Sequence[Silence] = (),
) -> list[TopItem]:
    rows = [
        (c.function, "initcall", "kernel", d, c.start_s, c.source, c.line)
        for c in calls
        if c.module is None and (d := initcall_s(c))
    ]  # fmt: skip
    rows += [
        (m.module, "module", "kernel", m.duration_s, m.start_s, m.source, None)
        for m in modules
        if m.module is not None
    ]
    rows += [(p.name, p.kind, p.stage, p.duration_s, p.start_s, p.source, p.line) for p in phases]
    rows += [
        (f"async_synchronize @ {w.pid}", "async_wait", "kernel", w.duration_s, w.start_s,
         w.source, w.line)
        for w in waits
    ]  # fmt: skip
    rows += [
        (u.name, "unattributed", u.stage, u.duration_s, u.start_s, u.source, u.line)
        for u in unattributed
    ]
    rows.sort(key=lambda r: (-r[3], r[1], r[0]))
    return [
        TopItem(i + 1, kind, stage, name, d, start, source, line)
        for i, (name, kind, stage, d, start, source, line) in enumerate(rows[:n])
    ]
