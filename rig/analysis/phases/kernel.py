"""Kernel sub-phases: calibrate_delay, waiting for the root device, USB enumeration."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from rig.analysis.lines import Line
from rig.analysis.parsers.kernel import Calibrate, KernelLog, RootWait
from rig.analysis.phases.phase import Timer
from rig.model.sections import Phase

# /dev/mmcblk0p2 -> mmcblk0, /dev/sda1 -> sda: the disk whose probe the kernel waits for.
_DISK = re.compile(rb"(?<=\d)p\d+$|(?<=[a-z])\d+$")
_BOGOMIPS = re.compile(rb"\d+\.\d+ BogoMIPS")


def _next_stamped(lines: Sequence[Line], i: int) -> int | None:
    return next((j for j in range(i + 1, len(lines)) if lines[j].printk_ts is not None), None)


def wait_end(lines: Sequence[Line], w: RootWait, k: KernelLog) -> int | None:
    """Where the wait for the root device ended: the do_mount_root tag if the kernel has
    the hook, else the line after the last one naming the disk (its partition scan),
    else the root mount itself. The kernel polls (100 ms in 2.6, 5 ms later), so the true
    end may lag the probe by up to one poll: that poll is part of the wait."""
    if w.kind == "rootdelay":  # a fixed sleep: whatever the kernel prints next ends it
        return _next_stamped(lines, w.line)
    mount = k.root_mount.line if k.root_mount and k.root_mount.line > w.line else None
    stop = mount if mount is not None else len(lines)
    tag = next((j for j in range(w.line + 1, stop) if lines[j].tag == "do_mount_root"), None)
    if tag is not None or w.device is None:
        return tag if tag is not None else mount
    part = w.device.rsplit("/", 1)[-1].encode()
    disk = _DISK.sub(b"", part)
    # The disk's own messages (" mmcblk0: p1 p2"), not the mount's ("EXT4-fs (mmcblk0p2)").
    named = [
        j
        for j in range(w.line + 1, stop)
        if disk and disk in lines[j].raw and part not in lines[j].raw
    ]
    if named and named[-1] + 1 < len(lines):
        return named[-1] + 1
    return mount


def _usb_sessions(t: Timer, k: KernelLog) -> list[Phase]:
    """From "new ... USB device" to the last line about that device or its interfaces."""
    out: list[Phase] = []
    for ev in (e for e in k.usb if e.new):
        dev = ev.device
        # "1-1" owns "1-1:1.0" (its interface) and "1-1.2" (behind its hub), not "1-10".
        mine = [
            e.line
            for e in k.usb
            if e.line > ev.line and (e.device == dev or e.device.startswith((dev + ":", dev + ".")))
        ]
        last = max(mine, default=ev.line)
        if last > ev.line:
            name = f"usb {dev} ({ev.speed})"
            out.append(t.between("kernel", "usb_enumeration", name, ev.line, last, False))
    return out


def _calibration(t: Timer, cal: Calibrate) -> Phase | None:
    """Only the measured form runs a loop; preset, timer-derived and cached values take
    microseconds, so whatever follows their line is not calibration.

    A 2.6-era console prints `Calibrating delay loop... ` before the loop and the result
    after it: the bytes between time the loop. A kernel that holds the line until it is
    whole shows no such gap; its stamp (taken before the loop) and the next stamped
    line's bound the loop from above."""
    if cal.kind != "measured":
        return None
    detail = {"lpj": cal.lpj, "bogomips": cal.bogomips, "calibration": cal.kind}
    name = f"calibrate_delay ({cal.kind})"
    res = t.lines[cal.result_line] if cal.result_line is not None else None
    m = _BOGOMIPS.search(res.raw) if res is not None else None
    if res is not None and m is not None:
        b = res.offset + m.start()
        end = t.line_end(cal.line)  # a result on a later line: from this line's end
        a = b - 1 if res.index == cal.line or end is None else end
        p = t.bytes("kernel", "calibrate_delay", name, a, b, cal.line, **detail)
        if p.duration_s > p.uncertainty_s:
            return p
    end = _next_stamped(t.lines, cal.result_line if cal.result_line is not None else cal.line)
    if end is None:
        return None
    p = t.between("kernel", "calibrate_delay", name, cal.line, end, True, **detail)
    return replace(p, bound="upper_bound")


def _root_wait(t: Timer, w: RootWait, k: KernelLog) -> Phase | None:
    end = wait_end(t.lines, w, k)
    if end is None:
        return None
    name = f"{w.kind} {w.device or f'{w.seconds} s'}"
    detail = {"device": w.device, "seconds": w.seconds}
    p = t.between("kernel", w.kind, name, w.line, end, False, **detail)
    if w.kind == "rootdelay" and w.seconds is not None:
        # The sleep is what the line announced; what follows it until the next line is not.
        return replace(p, duration_s=min(p.duration_s, float(w.seconds)))
    return replace(p, bound="upper_bound")


def kernel_phases(t: Timer, k: KernelLog) -> list[Phase]:
    out = [p for cal in k.calibrations if (p := _calibration(t, cal)) is not None]
    out += [p for w in k.root_waits if (p := _root_wait(t, w, k)) is not None]
    return out + _usb_sessions(t, k)
