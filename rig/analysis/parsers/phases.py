"""Timed sub-phases of the boot stages, from parsed records: what the top-N table and
the advisor measure.

Bootloader: autoboot countdown, image checksum/hash, decompression, copies, reads,
`usb start`, the BOOTSTAGE rows. Kernel (`kernel_phases`): calibrate_delay, waiting for
the root device, USB enumeration. Userspace: systemd units from "Starting" to "Started".
"""

from __future__ import annotations

from collections.abc import Sequence

from rig.analysis.events import Timebase
from rig.analysis.lines import Line
from rig.analysis.parsers.console import ConsoleParse
from rig.analysis.parsers.kernel_phases import kernel_phases
from rig.analysis.parsers.phase import Phase, Timer
from rig.analysis.parsers.systemd import SystemdLog
from rig.analysis.parsers.timing import at
from rig.analysis.parsers.uboot import UBootLog


def _uboot(t: Timer, u: UBootLog) -> list[Phase]:
    out: list[Phase] = []
    if (ab := u.autoboot) is not None and ab.line + 1 < len(t.lines):
        name = f"autoboot countdown (bootdelay={ab.bootdelay})"
        detail = {"bootdelay": ab.bootdelay, "counts": list(ab.counts)}
        out.append(t.between("bootloader", "autoboot", name, ab.line, ab.line + 1, True, **detail))
    for st in u.steps:
        stage = "kernel" if st.text.startswith("Uncompressing Linux") else "bootloader"
        if st.self_us is not None:
            # U-Boot timed it itself ("N bytes read in M ms") and printed it when done.
            d, end = st.self_us / 1e6, at(t.lines[st.line], t.tb)
            detail = {"size_bytes": st.size_bytes}
            out.append(
                Phase(
                    stage, st.kind, st.text, st.line, st.line, end.t_s - d, d, "uboot", 1e-3, detail
                )
            )
        elif st.end_line is not None:
            out.append(t.between(stage, st.kind, st.text, st.line, st.end_line, True, ok=st.ok))
    for report in u.bootstage:
        for row in report.rows:
            if row.elapsed_us and row.stage != "reset":
                d, name = row.elapsed_us / 1e6, row.stage or "(unnamed)"
                detail = {"mark_s": row.mark_us / 1e6}  # on U-Boot's timer, not ours
                out.append(
                    Phase(
                        "bootloader",
                        "bootstage",
                        name,
                        row.line,
                        None,
                        None,
                        d,
                        "uboot",
                        1e-6,
                        detail,
                    )
                )
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
    lines: Sequence[Line], parsed: ConsoleParse, tb: Timebase, char_s: float
) -> list[Phase]:
    t = Timer(lines, tb, char_s)
    return _uboot(t, parsed.uboot) + kernel_phases(t, parsed.kernel) + _units(t, parsed.systemd)
