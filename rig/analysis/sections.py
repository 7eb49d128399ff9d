"""Report sections `uboot`, `kernel`, `systemd` and `app_events` from the parsed console."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from rig.analysis.events import Timebase, line_event
from rig.analysis.lines import Line
from rig.analysis.parsers.app import AppEvent
from rig.analysis.parsers.kernel import KernelLog
from rig.analysis.parsers.systemd import SystemdLog
from rig.analysis.parsers.uboot import WORK_KINDS, UBootLog
from rig.model import sections as m
from rig.model.sections import Phase

P = TypeVar("P", bound=m.Point)


def _point(cls: type[P], lines: Sequence[Line], i: int, tb: Timebase, *extra: Any) -> P:
    w = line_event("", lines[i], tb)
    return cls(i, w.t_s, w.source, *extra)


def _phases(phases: Sequence[Phase], *kinds: str) -> list[Phase]:
    return [p for p in phases if p.kind in kinds]


def uboot_section(
    lines: Sequence[Line], u: UBootLog, phases: Sequence[Phase], tb: Timebase
) -> m.UBootSection | None:
    if not (u.banners or u.autoboot or u.steps or u.starting_kernel is not None or u.bootstage):
        return None
    ab = u.autoboot
    countdown = next((p for p in phases if p.kind == "autoboot"), None)
    measured = countdown.duration_s if countdown else None
    return m.UBootSection(
        banners=[
            _point(m.Banner, lines, b.line, tb, b.version, b.phase or "U-Boot", b.build)
            for b in u.banners
        ],
        autoboot=_point(m.Autoboot, lines, ab.line, tb, ab.bootdelay, list(ab.counts), measured)
        if ab
        else None,
        images=list(u.images),
        steps=_phases(phases, *WORK_KINDS),
        bootstage=list(u.bootstage),
        starting_kernel=_point(m.Point, lines, u.starting_kernel, tb)
        if u.starting_kernel is not None
        else None,
    )


def kernel_section(
    lines: Sequence[Line],
    k: KernelLog,
    phases: Sequence[Phase],
    waits: list[m.AsyncWait],
    tb: Timebase,
) -> m.KernelSection | None:
    found = (k.version, k.cmdline, k.root_mount, k.freeing, k.run_init, k.panic)
    if all(x is None for x in found) and not (k.calibrations or k.root_waits or k.usb):
        return None
    mount, free, init, panic = k.root_mount, k.freeing, k.run_init, k.panic
    mount_at = (mount.fstype, mount.device, mount.readonly) if mount else ()
    return m.KernelSection(
        version=k.version.value if k.version else None,
        cmdline=k.cmdline,
        calibrate_delay=_phases(phases, "calibrate_delay"),
        root_waits=_phases(phases, "rootwait", "rootdelay"),
        usb=_phases(phases, "usb_enumeration"),
        root_mount=_point(m.RootMount, lines, mount.line, tb, *mount_at) if mount else None,
        freeing_init=_point(m.FreeingInit, lines, free.line, tb, free.kib, free.what)
        if free
        else None,
        run_init=_point(m.RunInit, lines, init.line, tb, init.value) if init else None,
        async_waits=waits,
        module_notes=list(k.module_notes),
        panic=_point(m.Panic, lines, panic.line, tb, panic.value) if panic else None,
    )


def systemd_section(
    lines: Sequence[Line], sd: SystemdLog, phases: Sequence[Phase], tb: Timebase
) -> m.SystemdSection | None:
    if sd.startup is None and not sd.units and not sd.targets:
        return None
    st = sd.startup
    parts = {label or "total": s for label, s in st.parts} if st else {}
    return m.SystemdSection(
        startup=_point(m.Startup, lines, st.line, tb, parts, st.total_s, st.scope) if st else None,
        targets_reached=[
            _point(m.TargetReached, lines, u.line, tb, u.unit)
            for u in sd.units
            if u.verb == "Reached target"
        ],
        target_times=list(sd.targets),
        units=_phases(phases, "unit"),
        failed=[
            _point(m.FailedUnit, lines, u.line, tb, u.unit, u.unit_id)
            for u in sd.units
            if u.status == "FAILED" or u.verb == "Failed to start"
        ],
    )


def app_events(lines: Sequence[Line], events: Sequence[AppEvent], tb: Timebase) -> list[m.AppEvent]:
    out = []
    for ev in events:
        e = line_event(ev.name, lines[ev.line], tb)
        out.append(m.AppEvent(e.name, e.t_s, e.source, e.uncertainty_s, ev.line,
                              e.extra["text"], ev.groups))  # fmt: skip
    return out
