"""The "where is the time going" table (after FreeBSD's TSLOG top-N): the slowest items
of every kind in one list.

A module's initcalls appear once, as the module's total; items may nest (a BOOTSTAGE row
holds the countdown, a USB initcall is inside the kernel stage), so the column ranks the
items, it does not add up to the boot time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rig.analysis.initcalls import Initcall
from rig.analysis.parsers.phase import Phase


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
) -> list[dict[str, Any]]:
    rows = [
        _row("initcall", "kernel", c.rec.function, c.duration_s, c.start.t_s, c.start.source,
             c.call.line if c.call else None)
        for c in calls
        if c.rec.module is None and c.duration_s
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
    rows.sort(key=lambda r: (-r["duration_s"], r["kind"], r["name"]))
    return [{"rank": i + 1, **r} for i, r in enumerate(rows[:n])]
