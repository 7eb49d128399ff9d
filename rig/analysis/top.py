"""The "where is the time going" table (after FreeBSD's TSLOG top-N): the slowest items
of every kind in one list, and the unattributed silences beside them.

A module's initcalls appear once, as the module's total; items may nest (a BOOTSTAGE row
holds the countdown, a USB initcall is inside the kernel stage), so the column ranks the
items, it does not add up to the boot time. `unattributed` rows are time no evidence
explains ("everything else"): they never overlap an item.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rig.analysis.initcalls import Initcall
from rig.analysis.phases.phase import Phase


def initcall_s(c: Initcall) -> float | None:
    """The kernel's own measure, but never more than its calling and return lines
    allow: before the clocksource switch `usecs` moves in jiffies (a 0.5 ms call can
    read 4000 usecs), while the printk stamps around it keep their resolution."""
    d = c.duration_s
    if d is None or c.printk_span_s is None:
        return d
    return min(d, max(c.printk_span_s, 0.0))


def _row(
    kind: str, stage: str, name: str, d: float, start: float | None, source: str, line: int | None
) -> dict[str, Any]:
    return {
        "kind": kind,
        "stage": stage,
        "name": name,
        "duration_s": d,
        "start_s": start,
        "source": source,
        "line": line,
    }


def top_table(
    calls: Sequence[Initcall],
    modules: Sequence[dict[str, Any]],
    phases: Sequence[Phase],
    waits: Sequence[dict[str, Any]],
    n: int,
    unattributed: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    rows = [
        _row("initcall", "kernel", c.rec.function, d, c.start.t_s, c.start.source,
             c.call.line if c.call else None)
        for c in calls
        if c.rec.module is None and (d := initcall_s(c))
    ]  # fmt: skip
    rows += [
        _row("module", "kernel", m["module"], m["duration_s"], m["start_s"], m["source"], None)
        for m in modules
        if m["module"] is not None
    ]
    rows += [
        _row(p.kind, p.stage, p.name, p.duration_s, p.start_s, p.source, p.line) for p in phases
    ]
    rows += [
        _row("async_wait", "kernel", f"async_synchronize @ {w['pid']}", w["duration_s"],
             w["start_s"], w["source"], w["line"])
        for w in waits
    ]  # fmt: skip
    rows += [
        _row("unattributed", u["stage"], u["name"], u["duration_s"], u["start_s"], u["source"],
             u["line"])
        for u in unattributed
    ]  # fmt: skip
    rows.sort(key=lambda r: (-r["duration_s"], r["kind"], r["name"]))
    return [{"rank": i + 1, **r} for i, r in enumerate(rows[:n])]
