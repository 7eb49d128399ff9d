"""Kernel and bootloader messages standing in for a missing hook (source `landmark`):
the message's own time minus its offset from the hook, calibrated on the QEMU target per
kernel version and architecture (`bench/landmark_offsets.py` writes the calibrations,
landmark_calibration.py picks one), the offset's spread its uncertainty. On a paced
console the bytes printed between hook and message add their wire time
(docs/analysis.md, "Boundaries without hooks").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.events import Timebase, line_event
from rig.analysis.kernelid import KernelId
from rig.analysis.landmark_calibration import Calibration, Choice, choose, load_calibrations
from rig.analysis.lines import Line
from rig.analysis.parsers.text import clean
from rig.model.report import Event


@dataclass(frozen=True)
class Landmark:
    key: str
    marker: str  # the boundary it stands in for
    pattern: re.Pattern[str]  # matched on the line's text without printk prefix
    message: str
    when: str


#: Per marker, nearest to the hook first: what lies between differs from kernel to
#: kernel (Debian's checks W+X mappings between freeing init memory and running init),
#: so the nearest wins even where a farther one scattered less on the calibration target.
LANDMARKS: tuple[Landmark, ...] = (
    Landmark(
        "uboot_starting_kernel",
        "bootm",
        re.compile(r"^Starting kernel \.\.\."),
        "U-Boot's `Starting kernel ...`",
        "printed as it jumps to the kernel",
    ),
    Landmark(
        "vfs_mounted_root",
        "do_mount_root",
        re.compile(r"^VFS: Mounted root \("),
        "`VFS: Mounted root`",
        "printed once the root filesystem is mounted",
    ),
    Landmark(
        "run_init",
        "kernel_init",
        re.compile(r"^Run \S+ as init process"),
        "`Run /sbin/init as init process`",
        "printed as the kernel executes init",
    ),
    Landmark(
        "freeing_init_memory",
        "kernel_init",
        re.compile(r"^Freeing (?:unused kernel (?:image \(\w+\) )?memory|init memory):"),
        "`Freeing unused kernel memory`",
        "printed as the kernel releases its init memory, before it runs init",
    ),
    # PID 1's own line (`systemd[1]: ` through kmsg, bare on its own console output); a
    # user manager's `Startup finished` (systemd[N]) is not the boot's.
    Landmark(
        "systemd_startup_finished",
        "ui_ready",
        re.compile(r"^(?:systemd\[1\]: )?Startup finished in "),
        "systemd's `Startup finished`",
        "logged once the boot transaction of the default target has no job left, so it "
        "follows the UI only where the UI's service is one of those jobs, as it is on the "
        "calibration target: elsewhere the offset is only as good as that assumption",
    ),
)


def find_landmarks(lines: Sequence[Line]) -> dict[str, Line]:
    """Each landmark's first line (key -> line)."""
    out: dict[str, Line] = {}
    for line in lines:
        if line.tag:
            continue
        text = clean(line)
        for lm in LANDMARKS:
            if lm.key not in out and lm.pattern.match(text):
                out[lm.key] = line
    return out


@dataclass(frozen=True)
class StandIn:
    """A landmark's event for its marker, and the calibration it took."""

    event: Event
    choice: Choice


def landmark_event(
    lm: Landmark, line: Line, choice: Choice, tb: Timebase, char_s: float, paced: bool | None
) -> Event:
    """The hook's time from its landmark line: the line's event shifted by the offset,
    the calibration's spread (widened when it is not the boot's kernel's own, and the
    unknown console share) added as own scatter."""
    off = choice.offset
    wire = off.bytes_between * char_s
    if paced is None:  # either way: the middle, with half of it as uncertainty
        shift, extra = wire / 2, abs(wire) / 2
    else:
        shift, extra = (wire, 0.0) if paced else (0.0, 0.0)
    offset = off.offset_s + shift
    cal_u = off.uncertainty_s + choice.widened_s + extra
    e = line_event(lm.marker, line, tb)
    detail = {
        **e.extra,
        "landmark": lm.key,
        "landmark_source": e.source,
        "offset_s": offset,
        "calibration": f"{choice.calibration.target_of(lm.key)}, {off.n} boots",
    }
    t, u, own = e.t_s - offset, e.uncertainty_s + cal_u, e.own_s + cal_u
    return Event(lm.marker, t, "landmark", u, detail, e.clock, e.quant_s, own, e.rate_u)


def landmark_events(
    lines: Sequence[Line],
    tb: Timebase,
    char_s: float,
    paced: bool | None,
    kernel: KernelId,
    calibrations: tuple[Calibration, ...] | None = None,
) -> dict[str, StandIn]:
    """Marker -> the event of its nearest landmark that has a calibration (the boot's
    kernel's, or the nearest kernel's: landmark_calibration.choose)."""
    cals = load_calibrations() if calibrations is None else calibrations
    found = find_landmarks(lines)
    out: dict[str, StandIn] = {}
    for lm in LANDMARKS:
        if lm.marker in out or lm.key not in found:
            continue
        if (choice := choose(lm.key, kernel, cals)) is None:
            continue
        ev = landmark_event(lm, found[lm.key], choice, tb, char_s, paced)
        out[lm.marker] = StandIn(ev, choice)
    return out
