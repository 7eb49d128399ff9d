"""Timed sub-phases of the boot stages, from parsed records: what the top-N table and
the advisor measure. Bootloader: autoboot countdown, image checksum/hash, decompression,
copies, reads, `usb start`, the BOOTSTAGE rows; kernel (`phases.kernel`); userspace:
systemd units. What each may rest on: docs/analysis.md, "Evidence".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from rig.analysis.events import Timebase, line_event
from rig.analysis.lines import Line
from rig.analysis.parsers.console import ConsoleParse
from rig.analysis.parsers.systemd import SystemdLog
from rig.analysis.parsers.uboot import UBootLog, UBootWork
from rig.analysis.phases.kernel import kernel_phases
from rig.analysis.phases.phase import Timer
from rig.analysis.wire import ByteClock
from rig.model.sections import Phase

# The prompt with its first count: the wait starts after it, the line feed ends it.
_PROMPT = re.compile(rb"autoboot:\s*\d+ ?")


def verdict_bytes(t: Timer, i: int) -> tuple[int, int] | None:
    """(last byte of `... `, first byte of the line's last word) when a verdict follows
    the dots on line `i`; the work ran between them."""
    raw, off = t.lines[i].raw, t.lines[i].offset
    dots = raw.rfind(b"...")
    if dots < 0:
        return None
    q = dots + 3
    while q < len(raw) and raw[q : q + 1].isspace():
        q += 1
    rest = raw[q:].rstrip()
    if not rest:
        return None
    return off + q - 1, off + q + rest.rfind(b" ") + 1


def _announced(t: Timer, i: int, stage: str, kind: str, name: str, **detail: object) -> Phase:
    """Work announced on line `i`: to its verdict, or to the next line (upper bound)."""
    if (ab := verdict_bytes(t, i)) is not None:
        return t.bytes(stage, kind, name, *ab, i, **detail)
    end = t.line_end(i)
    assert end is not None
    p = t.bytes(stage, kind, name, end, end + 1, i, **detail)
    return replace(p, bound="upper_bound")


def _countdown(t: Timer, line: int, name: str, detail: dict[str, object]) -> Phase | None:
    end = t.line_end(line)
    if end is None:
        return None
    m = _PROMPT.search(t.lines[line].raw)
    if m is None:  # "Autobooting in N seconds": announced, then the wait
        return _announced(t, line, "bootloader", "autoboot", name, **detail)
    return t.bytes("bootloader", "autoboot", name, t.lines[line].offset + m.end() - 1, end, line,
                   **detail)  # fmt: skip


def _work(t: Timer, st: UBootWork) -> Phase | None:
    stage = "kernel" if st.text.startswith("Uncompressing Linux") else "bootloader"
    if st.self_us is not None:
        # U-Boot timed it itself ("N bytes read in M ms") and printed it when done.
        d, end = st.self_us / 1e6, line_event("", t.lines[st.line], t.tb)
        detail = {"size_bytes": st.size_bytes}
        return Phase(
            stage, st.kind, st.text, st.line, st.line, end.t_s - d, d, d, "measured", "uboot",
            1e-3, detail,
        )  # fmt: skip
    if st.end_line is None:
        return None
    if st.kind == "usb":  # from `starting USB...` to the end of the scan output
        end = t.line_end(st.end_line - 1)
        assert end is not None
        return t.bytes(stage, st.kind, st.text, t.lines[st.line].offset, end, st.line, ok=st.ok)
    return _announced(t, st.line, stage, st.kind, st.text, ok=st.ok)


def _uboot(t: Timer, u: UBootLog) -> list[Phase]:
    out: list[Phase] = []
    if (ab := u.autoboot) is not None:
        name = f"autoboot countdown (bootdelay={ab.bootdelay})"
        detail: dict[str, object] = {"bootdelay": ab.bootdelay, "counts": list(ab.counts)}
        if (p := _countdown(t, ab.line, name, detail)) is not None:
            out.append(p)
    out += [p for st in u.steps if (p := _work(t, st)) is not None]
    for report in u.bootstage:
        for row in report.rows:
            if row.elapsed_s and row.stage != "reset":
                d, name = row.elapsed_s, row.stage or "(unnamed)"
                detail = {"mark_s": row.mark_s}  # on U-Boot's timer, not ours
                out.append(
                    Phase("bootloader", "bootstage", name, row.line, None, None, d, d,
                          "measured", "uboot", 1e-6, detail)
                )  # fmt: skip
    return out


_DONE = {"Starting": ("Started", "Finished", "Failed to start"), "Mounting": ("Mounted",)}


def _units(t: Timer, sd: SystemdLog) -> list[Phase]:
    out: list[Phase] = []
    pending: dict[tuple[str, str], int] = {}
    for u in sd.units:
        if u.verb in _DONE:
            pending[(u.verb, u.unit)] = u.line
            continue
        for verb, ends in _DONE.items():
            if u.verb in ends and (start := pending.pop((verb, u.unit), None)) is not None:
                detail = {"status": u.status or None, "unit_id": u.unit_id}
                out.append(t.between("userspace", "unit", u.unit, start, u.line, False, **detail))
    return out


def build_phases(
    lines: Sequence[Line], parsed: ConsoleParse, tb: Timebase, char_s: float, clock: ByteClock
) -> list[Phase]:
    t = Timer(lines, tb, char_s, clock)
    return _uboot(t, parsed.uboot) + kernel_phases(t, parsed.kernel) + _units(t, parsed.systemd)
