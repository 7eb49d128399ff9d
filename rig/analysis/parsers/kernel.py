"""Kernel printk lines that matter for boot time (everything but initcall_debug).

Version and command line, `calibrate_delay` in its forms, waiting for the root device,
the root mount, freeing init memory, the hand-over to init, USB enumeration, module
notes and panics. The printk prefix (`[    1.234567]`, a caller id `[    T1]`, a `<6>`
level) is already gone from the text (`Line.body`); the stamp is `Line.printk_ts`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.evidence import panic_reason
from rig.analysis.lines import Line
from rig.analysis.parsers.text import clean
from rig.model.sections import Cmdline, ModuleNote

_VERSION = re.compile(r"^Linux version (\S+)")
_CMDLINE = re.compile(r"^Kernel command line: (.*)$")
# "Calibrating delay loop... ", "Calibrating delay loop (skipped) preset value.. ",
# "... (skipped), value calculated using timer frequency.. ", "... (skipped) already
# calibrated this CPU", "Calibrating delay using timer specific routine.. ".
_CALIBRATE = re.compile(r"^Calibrating delay (?:loop|using timer specific routine)(.*)$")
_BOGOMIPS = re.compile(r"(\d+\.\d+) BogoMIPS \(lpj=(\d+)\)")
_WAIT_ROOT = re.compile(r"^Waiting for root device (\S+?)\.\.\.")
_ROOT_DELAY = re.compile(r"^Waiting (\d+) sec before mounting root device")
_VFS = re.compile(r"^VFS: Mounted root \((\S+) filesystem\)( readonly)? on device (\d+:\d+)")
_FREEING = re.compile(
    r"^Freeing (unused kernel (?:image \((\w+)\) )?memory|init memory): (\d+)([kKM])"
)
_RUN_INIT = re.compile(r"^Run (\S+) as init process")
# 2.6.31: "new high speed USB device using r8a66597_hcd and address 2";
# current: "new high-speed USB device number 2 using ehci-platform".
_USB_NEW = re.compile(
    r"^usb (\S+): new (.+?) USB device (?:number (\d+) )?using (\S+)(?: and address (\d+))?"
)
_USB_OTHER = re.compile(r"^(?:usb|hub) (\S+): (.*)$")
_MODULE_NOTE = re.compile(
    r"^([\w-]+): (loading out-of-tree module taints kernel|module verification failed"
    r"|module license .* taints kernel)"
)


@dataclass(frozen=True)
class Calibrate:
    line: int
    kind: str  # measured | preset | timer_frequency | timer_routine | cached
    bogomips: float | None
    lpj: int | None
    result_line: int | None  # where "N BogoMIPS (lpj=N)" was printed


@dataclass(frozen=True)
class RootWait:
    line: int
    kind: str  # "rootwait" (wait for the device) or "rootdelay" (a fixed sleep)
    device: str | None
    seconds: int | None


@dataclass(frozen=True)
class RootMount:
    line: int
    fstype: str
    device: str
    readonly: bool


@dataclass(frozen=True)
class FreeingInit:
    line: int
    kib: int
    what: str  # "initmem", "unused kernel memory", "init memory"


@dataclass(frozen=True)
class UsbEvent:
    line: int
    device: str  # "1-1", "usb1", "1-0:1.0"
    new: bool  # the "new ... USB device" line that starts an enumeration
    speed: str | None
    text: str


@dataclass(frozen=True)
class Marked:
    """A one-off line: version, hand-over to init, a panic."""

    line: int
    value: str


@dataclass(frozen=True)
class KernelLog:
    version: Marked | None
    cmdline: Cmdline | None
    calibrations: tuple[Calibrate, ...]
    root_waits: tuple[RootWait, ...]
    root_mount: RootMount | None
    freeing: FreeingInit | None
    run_init: Marked | None
    usb: tuple[UsbEvent, ...]
    module_notes: tuple[ModuleNote, ...]  # "module: message"
    panic: Marked | None


# A parameter is a run of non-blank characters and double-quoted strings (next_arg()).
_ARG = re.compile(r'(?:[^\s"]|"[^"]*"?)+')


def parse_cmdline(text: str) -> dict[str, str | None]:
    """`key=value` and bare `flag` parameters; quotes around a value are dropped, and a
    later parameter of the same name wins (as for most kernel parameters)."""
    args: dict[str, str | None] = {}
    for word in _ARG.findall(text):
        key, eq, value = word.partition("=")
        args[key.strip('"')] = value.strip('"') if eq else None
    return args


def _calibrate_kind(rest: str) -> str:
    if "preset" in rest:
        return "preset"
    if "timer frequency" in rest:
        return "timer_frequency"
    if "already calibrated" in rest:
        return "cached"
    if "timer specific" in rest:
        return "timer_routine"
    return "measured"


def _calibrate(i: int, texts: Sequence[str], rest: str, full: str) -> Calibrate:
    kind = _calibrate_kind(full)
    m, at = _BOGOMIPS.search(rest), i
    # If another message interrupted the continuation, the result is on a later line.
    j = i + 1
    while m is None and j < min(len(texts), i + 4):
        m, at = _BOGOMIPS.search(texts[j]), j
        j += 1
    if m is None:
        return Calibrate(i, kind, None, None, None)
    return Calibrate(i, kind, float(m.group(1)), int(m.group(2)), at)


def _freeing(i: int, m: re.Match[str]) -> FreeingInit:
    n = int(m.group(3))
    return FreeingInit(i, n * 1024 if m.group(4) == "M" else n, m.group(2) or m.group(1))


def _usb(i: int, t: str) -> UsbEvent | None:
    if m := _USB_NEW.match(t):
        return UsbEvent(i, m.group(1), True, m.group(2), t)
    if t.startswith(("usb ", "hub ")) and (m := _USB_OTHER.match(t)):
        return UsbEvent(i, m.group(1), False, None, t)
    return None


def _root_wait(i: int, t: str) -> RootWait | None:
    if m := _WAIT_ROOT.match(t):
        return RootWait(i, "rootwait", m.group(1), None)
    if m := _ROOT_DELAY.match(t):
        return RootWait(i, "rootdelay", None, int(m.group(1)))
    return None


def parse_kernel(lines: Sequence[Line]) -> KernelLog:
    texts = [clean(ln) for ln in lines]
    calib: list[Calibrate] = []
    waits: list[RootWait] = []
    usb: list[UsbEvent] = []
    notes: list[ModuleNote] = []
    version: Marked | None = None
    run_init: Marked | None = None
    panic: Marked | None = None
    cmdline: Cmdline | None = None
    mount: RootMount | None = None
    freeing: FreeingInit | None = None
    for i, t in enumerate(texts):
        if m := _CALIBRATE.match(t):
            calib.append(_calibrate(i, texts, m.group(1), t))
        elif ev := _usb(i, t):
            usb.append(ev)
        elif wait := _root_wait(i, t):
            waits.append(wait)
        elif m := _MODULE_NOTE.match(t):
            notes.append(ModuleNote(i, f"{m.group(1)}: {m.group(2)}"))
        elif version is None and (m := _VERSION.match(t)):
            version = Marked(i, m.group(1))
        elif cmdline is None and (m := _CMDLINE.match(t)):
            cmdline = Cmdline(i, m.group(1), parse_cmdline(m.group(1)))
        elif mount is None and (m := _VFS.match(t)):
            mount = RootMount(i, m.group(1), m.group(3), bool(m.group(2)))
        elif freeing is None and (m := _FREEING.match(t)):
            freeing = _freeing(i, m)
        elif run_init is None and (m := _RUN_INIT.match(t)):
            run_init = Marked(i, m.group(1))
        elif panic is None and (reason := panic_reason(t)) is not None:
            panic = Marked(i, reason)
    return KernelLog(
        version,
        cmdline,
        tuple(calib),
        tuple(waits),
        mount,
        freeing,
        run_init,
        tuple(usb),
        tuple(notes),
        panic,
    )
