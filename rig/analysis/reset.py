"""A board that started again during its boot (a watchdog, a brown-out, another rig's
power cycle), found so that two boots are never timed as one slow one. The boot is timed
on the first boot's share of the artifacts; report.json `reset` says when, by which
signs (docs/analysis.md, "Resets").
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rig.analysis.events import Timebase, line_event
from rig.analysis.lines import Line
from rig.analysis.stages import Stage
from rig.model import Chunk, MarkerScan
from rig.model import report as model

#: How far below the highest stamp so far a restarted printk clock must be: more than
#: the kernel's own reordering of lines logged on two CPUs (microseconds).
RESTART_S = 0.010
#: A banner at a line's start, after control bytes or terminal escapes a bootloader
#: may send first; its stage ranks it in the chain (TPL, VPL, SPL, then U-Boot).
_BANNER = re.compile(
    rb"^(?:[^\x20-\x7e]|\x1b\[[0-9;?]*[A-Za-z])*"
    rb"(?:U-Boot(?: (?P<stage>TPL|VPL|SPL))? \d{4}\.\d{2}|barebox \d{4}\.\d{2}\.\d)"
)
_RANK = {b"TPL": 0, b"VPL": 1, b"SPL": 2, None: 3}
BANNER, PRINTK, POWER = "bootloader_banner", "printk_restart", "power_edge"


@dataclass(frozen=True)
class ConsoleReset:
    """The first line of the new boot, and the signs the console gives of it."""

    line: int
    signs: tuple[tuple[str, int], ...]  # (sign, line index)
    printk: tuple[float, float] | None = None  # the stamp before, the restarted stamp


def second_banner(lines: Sequence[Line]) -> int | None:
    """The first banner that starts a boot over, or None. TPL, VPL, SPL and U-Boot print
    one banner each, in that order, on every boot: a chain, not a reset."""
    last: int | None = None
    kernel = False
    for ln in lines:
        if m := _BANNER.match(ln.raw):
            rank = _RANK[m.group("stage")]
            if kernel or (last is not None and rank <= last):
                return ln.index
            last = rank
        elif ln.printk_ts is not None:
            kernel = True
    return None


def printk_restart(lines: Sequence[Line]) -> tuple[int, float, float] | None:
    """The first line of a restarted printk clock, with the stamp it fell from and the
    one it fell to; None when the clock never starts again. It takes two lines in a row:
    one out of order is line noise turning a digit (hostclock.garbled_stamps)."""
    stamped = [ln for ln in lines if ln.printk_ts is not None]
    high = None
    for a, b in itertools.pairwise(stamped):
        assert a.printk_ts is not None and b.printk_ts is not None
        if high is not None and a.printk_ts < high - RESTART_S and b.printk_ts < high - RESTART_S:
            return a.index, high, a.printk_ts
        high = a.printk_ts if high is None else max(high, a.printk_ts)
    return None


def console_reset(lines: Sequence[Line]) -> ConsoleReset | None:
    banner = second_banner(lines)
    restart = printk_restart(lines)
    signs = []
    if banner is not None:
        signs.append((BANNER, banner))
    if restart is not None:
        signs.append((PRINTK, restart[0]))
    if not signs:
        return None
    first = min(i for _, i in signs)
    while first > 0 and not lines[first - 1].raw.strip():
        first -= 1  # the blank lines a bootloader starts with are the new boot's
    return ConsoleReset(first, tuple(signs), restart[1:] if restart else None)


def power_reset(scan: MarkerScan | None) -> int | None:
    """The sample where the rail fell between the power edge and a second power-up."""
    if scan is None or not scan.power_channel or len(scan.power_up) < 2:
        return None
    first, again = scan.power_up[0], scan.power_up[1]
    return next((d for d in scan.power_down if first < d < again), again)


def scan_before(scan: MarkerScan, sample: int) -> MarkerScan:
    """The capture as the first boot saw it: nothing from `sample` on."""
    return dataclasses.replace(
        scan,
        power_up=tuple(s for s in scan.power_up if s < sample),
        power_down=tuple(s for s in scan.power_down if s < sample),
        edges={k: tuple(s for s in v if s < sample) for k, v in scan.edges.items()},
    )


def chunks_before(chunks: Sequence[Chunk], offset: int) -> list[Chunk]:
    """The reads of the console stream's first `offset` bytes."""
    out, done = [], 0
    for c in chunks:
        if done >= offset:
            break
        out.append(c if done + len(c.data) <= offset else Chunk(c.t_ns, c.data[: offset - done]))
        done += len(c.data)
    return out


@dataclass(frozen=True)
class BootCut:
    """The first boot's share of the artifacts; `console`/`sample`: where the new boot
    begins (None: no such sign)."""

    lines: list[Line]
    chunks: list[Chunk]
    scan: MarkerScan | None
    console: ConsoleReset | None = None
    sample: int | None = None

    @property
    def reset(self) -> bool:
        return self.console is not None or self.sample is not None


def cut(
    lines: list[Line],
    chunks: Sequence[Chunk],
    scan: MarkerScan | None,
    timebase: Callable[[MarkerScan | None, list[Line], Sequence[Chunk]], Timebase],
) -> BootCut:
    """The first boot's share. `timebase` builds a time base from a capture and lines, to
    share out what only one artifact shows: with a power edge, the lines placed after
    the rail fell are the new boot's; with a console sign alone, the capture's edges
    after the sign's line (a reset that keeps the rail up: the hooks fire again)."""
    con = console_reset(lines)
    sample = power_reset(scan)
    end = con.line if con is not None else len(lines)
    if sample is None and con is None:
        return BootCut(lines, list(chunks), scan, con, sample)
    first_scan = scan_before(scan, sample) if scan is not None and sample is not None else scan
    before = lines[:end]
    tb = timebase(first_scan, before, chunks_before(chunks, _offset(lines, end))) if scan else None
    if scan is not None and tb is not None and tb.power_sample is not None and tb.samplerate:
        if sample is not None:  # what the new boot printed before a sign of its own
            fell = (sample - tb.power_sample) / tb.samplerate
            by_time = next((ln.index for ln in before if line_event("", ln, tb).t_s >= fell), None)
            end = by_time if by_time is not None else end
        elif con is not None:  # the latest the sign's line can have begun
            ev = line_event("", dataclasses.replace(lines[con.line], printk_ts=None), tb)
            late = ev.t_s + (ev.uncertainty_s or 0.0)
            first_scan = scan_before(scan, tb.power_sample + math.ceil(late * tb.samplerate))
    if end == len(lines):
        return BootCut(lines, list(chunks), first_scan, con, sample)
    return BootCut(lines[:end], chunks_before(chunks, lines[end].offset), first_scan, con, sample)


def _offset(lines: Sequence[Line], end: int) -> int:
    """The console stream's offset where line `end` starts (all of it past the last)."""
    return lines[end].offset if end < len(lines) else 1 << 62


def describe(
    boot: BootCut, lines: Sequence[Line], tb: Timebase, stages: Sequence[Stage]
) -> model.Reset | None:
    """report.json `reset`: when, by which signs, in which stage. A console sign's line
    is placed by its arrival (its printk stamp is the new kernel's clock)."""
    signs: list[model.ResetSign] = []
    if boot.sample is not None and tb.power_sample is not None and tb.samplerate:
        u = 1 / tb.samplerate
        t = (boot.sample - tb.power_sample) / tb.samplerate
        signs.append(model.ResetSign(POWER, t, "gpio", u, sample=boot.sample))
    con = boot.console
    for sign, i in con.signs if con else ():
        ev = line_event("", dataclasses.replace(lines[i], printk_ts=None), tb)
        frm, to = con.printk if con and con.printk and sign == PRINTK else (None, None)
        signs.append(
            model.ResetSign(
                sign, ev.t_s, ev.source, ev.uncertainty_s, line=i, text=lines[i].text[:200],
                printk_from_s=frm, printk_to_s=to,
            )
        )  # fmt: skip
    if not signs:
        return None
    # The rail's fall is the reset itself; a console sign is the new boot's first line.
    best = signs[0] if signs[0].sign == POWER else min(signs, key=lambda s: s.line or 0)
    # The old boot's last line with something on it (the new boot may start with blanks).
    last = next((ln for ln in reversed(boot.lines) if ln.raw.strip()), None)
    after = line_event("", last, tb).t_s if best.sign != POWER and last is not None else None
    # The stages were built on the first boot's share: those it ended came before.
    nxt = 1 + max((i for i, s in enumerate(stages) if s.end is not None), default=-1)
    return model.Reset(
        t_s=best.t_s,
        uncertainty_s=best.uncertainty_s,
        source=best.source,
        bound=None if best.sign == POWER else "upper",
        after_s=after,
        stage=stages[nxt].name if nxt < len(stages) else None,
        lines_after=len(lines) - len(boot.lines),
        signs=signs,
    )


def note(reset: model.Reset) -> str:
    where = f"in stage {reset.stage}" if reset.stage else "after the last stage"
    how = " and ".join(dict.fromkeys(s.sign.replace("_", " ") for s in reset.signs))
    when = "at" if reset.bound is None else "by"
    return (
        f"the board reset {where}, {when} {reset.t_s:.6f} s ({how}); the {reset.lines_after} "
        "console lines after it are the next boot's and are not timed as this one"
    )
