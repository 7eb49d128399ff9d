"""Which clock a printed time is on: the report's t = 0, the kernel's own clock, or none
the report states (the terminal and the HTML pages print by this rule)."""

from __future__ import annotations

from rig.model.clocks import PrintkFit
from rig.model.report import Report

#: The clock column's name for the kernel's own clock (seconds since it started).
KERNEL_CLOCK = "kernel"

#: What the terminal and the pages say of times off t = 0.
NO_T0 = "no t = 0: starts on the host clock are not shown; durations are differences on one clock"
KERNEL_NOTE = (
    f"{KERNEL_CLOCK}: seconds since the kernel's clock started, not from t = 0 "
    "(no printk fit onto it)"
)


def has_t0(report: Report) -> bool:
    """Whether the report states a t = 0: its `power` event (a capture with no power-up
    edge has none)."""
    return any(e.name == "power" for e in report.events)


def start_clock(source: str | None, t0: bool) -> str | None:
    """The clock a row's start is on: "" the report's t = 0, `KERNEL_CLOCK`, or None
    when it is on none the report states (its start is then not shown as a time)."""
    if source == "printk_relative":
        return KERNEL_CLOCK
    return "" if t0 else None


def printk_fit(fit: PrintkFit) -> str:
    return (
        f"printk clock: {len(fit.anchors)} anchors, drift {fit.drift_ppm:+.1f} ppm, "
        f"rms residual {fit.rms_residual_s * 1e6:.1f} µs"
    )
