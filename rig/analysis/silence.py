"""Unattributed time: console silences that no evidence explains (the "everything else"
of FreeBSD's TSLOG tables). A silence is measured on the kernel clock between stamped
lines, on the reference clock between a stamped and an unstamped one, else from byte
times, also inside a line at read boundaries; one smaller than its uncertainty is
dropped (docs/analysis.md, "Unattributed time").
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rig.analysis.events import Timebase, line_event
from rig.analysis.lines import Line
from rig.analysis.parsers.console import ConsoleParse
from rig.analysis.parsers.text import clean
from rig.analysis.wire import ByteClock
from rig.model import report as model
from rig.model.report import Initcall
from rig.model.sections import AsyncWait, Phase


@dataclass(frozen=True)
class Silence:
    line: int  # the line it follows (or, `inside`, the line it interrupts)
    inside: bool
    at: int  # offset of the first byte after it
    start_s: float | None
    duration_s: float
    source: str
    uncertainty_s: float


def _intra(lines: Sequence[Line], clock: ByteClock) -> dict[int, list[Silence]]:
    """Pauses inside lines, at the read boundaries that fall within them."""
    out: dict[int, list[Silence]] = {}
    starts = [ln.offset for ln in lines]
    for p in clock.read_starts():
        i = bisect.bisect_right(starts, p) - 1
        if i < 0 or p == lines[i].offset:
            continue
        d, source, u = clock.gap(p - 1, p)
        if d > 0:
            t = clock.at(p)[0]
            out.setdefault(i, []).append(Silence(i, True, p, t - d, d, source, u))
    return out


def _between(
    lines: Sequence[Line], i: int, tb: Timebase, clock: ByteClock, char_s: float, intra: float
) -> Silence | None:
    a, b = lines[i], lines[i + 1]
    wire = (b.offset - a.offset) * char_s + intra
    if a.printk_ts is not None and b.printk_ts is not None:
        d = b.printk_ts - a.printk_ts - wire
        # The length is the kernel clock's; its place is on the reference, as a phase's
        # (without a printk fit, the host's arrival), never a bare printk time.
        end = line_event("", b, tb)
        u = 2e-6 if tb.printk is None else 2e-6 + 2 * tb.printk.scatter
        return Silence(i, False, b.offset, end.t_s - max(d, 0.0), max(d, 0.0), "printk", u)
    if (a.printk_ts is None) != (b.printk_ts is None):
        if tb.printk is None:
            return None  # two clocks and no map between them
        ea, eb = line_event("", a, tb), line_event("", b, tb)
        if a.printk_ts is not None:
            start, ua = ea.t_s + wire, ea.uncertainty_s
        else:
            t, _, ua = clock.at(b.offset - 1)
            start = t + char_s
        d = eb.t_s - start
        u = math.hypot(ua, eb.uncertainty_s)
        return Silence(i, False, b.offset, start, max(d, 0.0), f"{ea.source}+{eb.source}", u)
    d, source, u = clock.gap(b.offset - 1, b.offset)
    return Silence(i, False, b.offset, clock.at(b.offset)[0] - d, d, source, u)


def find_silences(
    lines: Sequence[Line], tb: Timebase, clock: ByteClock, char_s: float
) -> list[Silence]:
    intra = _intra(lines, clock)
    out: list[Silence] = []
    for i in range(len(lines)):
        inside = intra.get(i, [])
        out += inside
        if i + 1 < len(lines):
            # Only pauses the bytes really show; read-boundary jitter is not one.
            shown = sum(x.duration_s for x in inside if x.duration_s > x.uncertainty_s)
            s = _between(lines, i, tb, clock, char_s, shown)
            if s is not None:
                out.append(s)
    return out


class Coverage:
    """Which silences the evidence explains: byte ranges (a, b] of phases and initcalls,
    and self-timed work (U-Boot's `read in M ms`, async waits) that ended at a line."""

    def __init__(self, spans: Iterable[tuple[int, int]], timed: Iterable[tuple[int, float]]):
        merged: list[list[int]] = []
        for a, b in sorted(s for s in spans if s[1] > s[0]):
            if merged and a < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self._a = [m[0] for m in merged]
        self._b = [m[1] for m in merged]
        self._timed: dict[int, float] = {}
        for at, d in timed:
            self._timed[at] = self._timed.get(at, 0.0) + d

    def explained(self, s: Silence) -> float:
        k = bisect.bisect_left(self._a, s.at) - 1
        if k >= 0 and s.at <= self._b[k]:
            return s.duration_s
        return min(self._timed.get(s.at, 0.0), s.duration_s)


def coverage(
    lines: Sequence[Line],
    phases: Sequence[Phase],
    calls: Sequence[Initcall],
    waits: Sequence[AsyncWait],
) -> Coverage:
    spans = [p.offsets for p in phases if p.offsets is not None]
    spans += [
        (lines[c.line].offset, lines[c.end_line].offset)
        for c in calls
        if c.line is not None and c.end_line is not None
    ]
    timed = [(lines[p.line].offset, p.duration_s) for p in phases
             if p.source == "uboot" and p.kind != "bootstage"]  # fmt: skip
    timed += [(lines[w.line].offset, w.duration_s) for w in waits]
    return Coverage(spans, timed)


def _stager(parsed: ConsoleParse, lines: Sequence[Line]) -> Callable[[int], str]:
    """Line index -> the software that was running: U-Boot up to `Starting kernel ...`
    (or the first stamped line), the kernel up to `Run /sbin/init`, then userspace."""
    u, k = parsed.uboot, parsed.kernel
    stamped = next((ln.index for ln in lines if ln.printk_ts is not None), None)
    kernel = u.starting_kernel + 1 if u.starting_kernel is not None else stamped
    user = next((r.line + 1 for r in (k.run_init, k.freeing) if r is not None), None)

    def stage(j: int) -> str:
        if kernel is None:
            return "bootloader" if u.banners else "userspace"
        if j < kernel:
            return "bootloader"
        return "userspace" if user is not None and j >= user else "kernel"

    return stage


def _label(lines: Sequence[Line], i: int) -> str:
    """The line a silence follows, skipping blank ones (`Starting kernel ...` + CR LF)."""
    while i > 0 and not clean(lines[i]).strip():
        i -= 1
    text = clean(lines[i]).strip()
    return text if len(text) <= 60 else text[:57] + "..."


def unattributed(
    lines: Sequence[Line],
    silences: Sequence[Silence],
    cover: Coverage,
    parsed: ConsoleParse,
    min_s: float,
) -> model.Unattributed:
    """The report's `unattributed` section: what is left of each silence once the
    evidence has taken its share, at least `min_s` and more than its uncertainty."""
    stage_of = _stager(parsed, lines)
    rows = []
    by_stage: dict[str, float] = {}
    for s in silences:
        left = s.duration_s - cover.explained(s)
        if left < max(min_s, s.uncertainty_s):
            continue
        stage = stage_of(s.line if s.inside else s.line + 1)
        rows.append(
            model.Silence(
                line=s.line,
                stage=stage,
                name=f"{'inside' if s.inside else 'after'} '{_label(lines, s.line)}'",
                start_s=s.start_s + (s.duration_s - left) if s.start_s is not None else None,
                duration_s=left,
                source=s.source,
                uncertainty_s=s.uncertainty_s,
            )
        )
        by_stage[stage] = by_stage.get(stage, 0.0) + left
    return model.Unattributed(sum(r.duration_s for r in rows), by_stage, min_s, rows)
