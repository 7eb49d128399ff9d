"""USB probing: `usb start` in U-Boot, USB host initcalls and enumeration in the kernel."""

from __future__ import annotations

import re

from rig.analysis.advice.context import Advisory, Context, ms

# Host controller and USB core initcalls (names and modules of the usual suspects).
_USB = re.compile(r"usb|[eoux]hci|hcd|hdrc|r8a66597|musb|dwc[23]|hub_init", re.IGNORECASE)


def usb_uboot(ctx: Context) -> list[Advisory]:
    """Gain: from `starting USB...` to the end of the bus scan output."""
    phases = ctx.phases_of("usb")
    if not phases:
        return []
    gain = sum(p.duration_s for p in phases)
    return [
        Advisory(
            "usb_probe",
            f"U-Boot starts USB and scans the bus: {ms(gain)}",
            gain,
            ctx.evidence(*(i for p in phases for i in (p.line, p.end_line))),
            "Drop `usb start` from bootcmd/preboot unless the board boots from USB; the "
            "kernel probes USB again anyway.",
        )
    ]


def usb_kernel(ctx: Context) -> list[Advisory]:
    """Gain: USB initcalls (run in sequence by kernel_init, so on the critical path).
    Enumeration runs in the hub thread, in parallel: it is listed, not counted."""
    calls = [
        c
        for c in ctx.initcalls
        if c.duration_s and (_USB.search(c.rec.name) or _USB.search(c.rec.module or ""))
    ]
    spans = ctx.phases_of("usb_enumeration")
    if not calls and not spans:
        return []
    gain = sum(c.duration_s or 0.0 for c in calls)
    kind = "measured"
    if not calls:  # no initcall_debug: all we know is how long enumeration took
        gain, kind = max(p.duration_s for p in spans), "upper_bound"
    lines = [c.call.line for c in calls if c.call] + [p.line for p in spans]
    return [
        Advisory(
            "usb_probe",
            f"USB probing in the kernel: {ms(gain)}",
            gain,
            ctx.evidence(*sorted(lines)[:20]),
            "Build the USB host and class drivers as modules and load them after the UI "
            "(unless the UI needs an input device on USB); avoid usb-storage delay_use "
            "(usb-storage.delay_use=0 or 1).",
            kind,
            {
                "initcalls": {c.rec.name: c.duration_s for c in calls},
                "enumerations": [
                    {"name": p.name, "start_s": p.start_s, "duration_s": p.duration_s}
                    for p in spans
                ],
            },
        )
    ]
