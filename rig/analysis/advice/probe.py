"""USB probing: `usb start` in U-Boot, USB host initcalls and enumeration in the kernel."""

from __future__ import annotations

import re

from rig.analysis.advice.context import Context, from_phases, ms
from rig.analysis.top import initcall_s
from rig.model.knob import none
from rig.model.report import Advisory

# Host controller and USB core initcalls (names and modules of the usual suspects).
_USB = re.compile(r"usb|[eoux]hci|hcd|hdrc|r8a66597|musb|dwc[23]|hub_init", re.IGNORECASE)


def usb_uboot(ctx: Context) -> list[Advisory]:
    """Gain: from `starting USB...` to the end of the bus scan output."""
    return from_phases(
        ctx,
        "usb_probe",
        ctx.phases_of("usb"),
        lambda g: f"U-Boot starts USB and scans the bus: {ms(g)}",
        "Drop `usb start` from bootcmd/preboot unless the board boots from USB; the "
        "kernel probes USB again anyway.",
        knob=none(
            "drop `usb start` from bootcmd or preboot, whichever runs it (the console does "
            "not say which); keep it when the board boots from USB"
        ),
    )


def usb_kernel(ctx: Context) -> list[Advisory]:
    """Gain: USB initcalls (run in sequence by kernel_init, so on the critical path).
    Enumeration runs in the hub thread, in parallel: it is listed, not counted."""
    calls = [
        (c, d)
        for c in ctx.initcalls
        if (d := initcall_s(c)) and (_USB.search(c.name) or _USB.search(c.module or ""))
    ]
    spans = ctx.phases_of("usb_enumeration")
    if not calls and not spans:
        return []
    gain = sum(d for _, d in calls)
    kind, basis = "measured", "the kernel's usecs of each USB initcall, within its printk span"
    evidence_s = gain
    if not calls:  # no initcall_debug: all we know is how long enumeration took
        longest = max(spans, key=lambda p: p.duration_s)
        gain, kind = longest.duration_s, "upper_bound"
        evidence_s = longest.observed_s or gain
        basis = "the longest enumeration, its first line to its last"
    lines = [c.line for c, _ in calls if c.line is not None] + [p.line for p in spans]
    return [
        Advisory(
            "usb_probe",
            f"USB probing in the kernel: {ms(gain)}",
            gain,
            kind,
            ctx.evidence(*sorted(lines)[:20]),
            evidence_s,
            basis,
            "Build the USB host and class drivers as modules and load them after the UI "
            "(unless the UI needs an input device on USB); avoid usb-storage delay_use "
            "(usb-storage.delay_use=0 or 1).",
            {
                "initcalls": {c.name: d for c, d in calls},
                "enumerations": [
                    {"name": p.name, "start_s": p.start_s, "duration_s": p.duration_s}
                    for p in spans
                ],
            },
            none(
                "build the USB host and class drivers as modules loaded after the UI (unless "
                "the UI needs a USB input device): no argument leaves USB out safely"
            ),
        )
    ]
