"""Report sections (`uboot`, `kernel`, `systemd`, `app_events`) as JSON-ready dicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rig.analysis.events import Timebase, line_event
from rig.analysis.lines import Line
from rig.analysis.parsers.app import AppEvent
from rig.analysis.parsers.kernel import KernelLog
from rig.analysis.parsers.systemd import SystemdLog
from rig.analysis.parsers.uboot import WORK_KINDS, UBootLog
from rig.analysis.phases.phase import Phase
from rig.analysis.timing import at


def _point(lines: Sequence[Line], i: int | None, tb: Timebase, **extra: Any) -> dict[str, Any]:
    if i is None:
        return {}
    w = at(lines[i], tb)
    return {"line": i, "t_s": w.t_s, "source": w.source, **extra}


def _phases(phases: Sequence[Phase], *kinds: str) -> list[dict[str, Any]]:
    return [p.as_dict() for p in phases if p.kind in kinds]


def uboot_section(
    lines: Sequence[Line], u: UBootLog, phases: Sequence[Phase], tb: Timebase
) -> dict[str, Any] | None:
    if not (u.banners or u.autoboot or u.steps or u.starting_kernel is not None or u.bootstage):
        return None
    ab = u.autoboot
    countdown = next((p for p in phases if p.kind == "autoboot"), None)
    return {
        "banners": [
            _point(lines, b.line, tb, version=b.version, phase=b.phase or "U-Boot", build=b.build)
            for b in u.banners
        ],
        "autoboot": _point(
            lines,
            ab.line,
            tb,
            bootdelay=ab.bootdelay,
            counts=list(ab.counts),
            measured_s=countdown.duration_s if countdown else None,
        )
        if ab
        else None,
        "images": [
            {
                "line": im.line,
                "format": im.format,
                "part": im.part,
                "address": im.address,
                "size_bytes": im.size_bytes,
                "compression": im.compression,
                "fields": im.fields,
            }
            for im in u.images
        ],
        "steps": _phases(phases, *WORK_KINDS),
        "bootstage": [
            {
                "line": r.line,
                "records": r.records,
                "rows": [
                    {"stage": x.stage, "mark_s": x.mark_us / 1e6, "elapsed_s": x.elapsed_us / 1e6}
                    for x in r.rows
                ],
                "accumulated": [
                    {"stage": x.stage, "total_s": x.total_us / 1e6} for x in r.accumulated
                ],
            }
            for r in u.bootstage
        ],
        "starting_kernel": _point(lines, u.starting_kernel, tb) or None,
    }


def kernel_section(
    lines: Sequence[Line],
    k: KernelLog,
    phases: Sequence[Phase],
    waits: list[dict[str, Any]],
    tb: Timebase,
) -> dict[str, Any] | None:
    found = (k.version, k.cmdline, k.root_mount, k.freeing, k.run_init, k.panic)
    if all(x is None for x in found) and not (k.calibrations or k.root_waits or k.usb):
        return None
    mount, free = k.root_mount, k.freeing
    return {
        "version": k.version.value if k.version else None,
        "cmdline": {"line": k.cmdline.line, "text": k.cmdline.text, "args": k.cmdline.args}
        if k.cmdline
        else None,
        "calibrate_delay": _phases(phases, "calibrate_delay"),
        "root_waits": _phases(phases, "rootwait", "rootdelay"),
        "usb": _phases(phases, "usb_enumeration"),
        "root_mount": _point(
            lines, mount.line, tb, fstype=mount.fstype, device=mount.device, readonly=mount.readonly
        )
        if mount
        else None,
        "freeing_init": _point(lines, free.line, tb, kib=free.kib, what=free.what)
        if free
        else None,
        "run_init": _point(lines, k.run_init.line, tb, path=k.run_init.value)
        if k.run_init
        else None,
        "async_waits": waits,
        "module_notes": [{"line": n.line, "text": n.value} for n in k.module_notes],
        "panic": _point(lines, k.panic.line, tb, reason=k.panic.value) if k.panic else None,
    }


def systemd_section(
    lines: Sequence[Line], sd: SystemdLog, phases: Sequence[Phase], tb: Timebase
) -> dict[str, Any] | None:
    if sd.startup is None and not sd.units and not sd.targets:
        return None
    st = sd.startup
    return {
        "startup": _point(
            lines,
            st.line,
            tb,
            parts={label or "total": s for label, s in st.parts},
            total_s=st.total_s,
            scope=st.scope,
        )
        if st
        else None,
        "targets_reached": [
            _point(lines, u.line, tb, target=u.unit) for u in sd.units if u.verb == "Reached target"
        ],
        "target_times": [
            {"line": t.line, "target": t.target, "userspace_s": t.seconds} for t in sd.targets
        ],
        "units": _phases(phases, "unit"),
        "failed": [
            _point(lines, u.line, tb, unit=u.unit, unit_id=u.unit_id)
            for u in sd.units
            if u.status == "FAILED" or u.verb == "Failed to start"
        ],
    }


def app_events(
    lines: Sequence[Line], events: Sequence[AppEvent], tb: Timebase
) -> list[dict[str, Any]]:
    out = []
    for ev in events:
        d = line_event(ev.name, lines[ev.line], tb).as_dict()
        out.append({**d, "groups": ev.groups})
    return out
