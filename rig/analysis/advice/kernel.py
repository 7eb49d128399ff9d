"""Kernel offenders: calibrate_delay without lpj=, slow initcalls, waiting for root."""

from __future__ import annotations

from rig.analysis.advice.context import Context, from_phases, ms
from rig.analysis.advice.knobs import initcall_knob, kernel_arg, remove_kernel_arg
from rig.analysis.top import initcall_s
from rig.model.knob import Knob, none
from rig.model.report import Advisory, Initcall


def _lpj_knob(ctx: Context, lpj: object) -> Knob:
    if not isinstance(lpj, int):
        return none(
            "this boot printed no `lpj=` value: take it from a boot whose calibration "
            "line prints `(lpj=N)`"
        )
    return kernel_arg(
        ctx,
        "lpj",
        str(lpj),
        f"the kernel presets loops_per_jiffy to the {lpj} this boot measured and skips the "
        "calibration; valid for this CPU at this clock only",
    )


def calibrate_delay(ctx: Context) -> list[Advisory]:
    """Gain: the calibration loop, between the bytes (or the stamps) around it. Only the
    measured form has a phase: a preset or timer-derived value takes microseconds."""
    out = []
    for p in ctx.phases_of("calibrate_delay"):
        lpj = p.detail.get("lpj")
        preset = f"`lpj={lpj}`" if lpj else "`lpj=` (the value a calibrated boot prints)"
        out += from_phases(
            ctx,
            "calibrate_delay",
            [p],
            lambda g: f"calibrate_delay measures the delay loop at every boot: {ms(g)}",
            f"Add {preset} to the kernel command line: the kernel then prints "
            "`Calibrating delay loop (skipped) preset value..` and skips the loop.",
            knob=_lpj_knob(ctx, lpj),
        )
    return out


_BUILTIN = (
    "Built in and run synchronously by kernel_init: build it as a module loaded after the "
    "UI, let the driver probe asynchronously (PROBE_PREFER_ASYNCHRONOUS / "
    "<module>.async_probe), or remove what it waits for (msleep, polling, firmware load)."
)
_ASYNC = (
    "Runs asynchronously (async_schedule): it delays the boot only where something waits "
    "for it (async_synchronize_*, see the async_waiting lines), so the gain is at most this."
)


def _module_advice(module: str) -> str:
    return (
        f"Module {module} is loaded during boot, in parallel with userspace: load it after "
        "the UI is up if the UI does not need it, or find what its init waits for "
        "(firmware, msleep). The gain is at most this, where the UI waits for it."
    )


def _console_inside(ctx: Context, c: Initcall) -> float | None:
    """UART time of the lines printed between the call and its return: with a synchronous
    console (2.6-era), part of what the kernel measured is its own chatter."""
    if c.line is None or c.end_line is None:
        return None
    return (ctx.lines[c.end_line].offset - ctx.lines[c.line + 1].offset) * ctx.char_s


def slow_initcalls(ctx: Context) -> list[Advisory]:
    """One advisory per initcall over the threshold; gain = the kernel's own measure,
    never more than its printk span (an upper bound for async entries and modules,
    which run beside the boot thread)."""
    out = []
    limit = ctx.options.initcall_threshold_s
    for c in ctx.initcalls:
        d = initcall_s(c)
        if d is None or d < limit:
            continue
        what = f"{c.function} [{c.module}]" if c.module else c.function
        if c.module:
            advice, kind = _module_advice(c.module), "upper_bound"
        elif c.async_cookie is not None:
            advice, kind = _ASYNC, "upper_bound"
        else:
            advice, kind = _BUILTIN, "measured"
        usecs = c.duration_s
        out.append(
            Advisory(
                "slow_initcall",
                f"initcall {what} takes {ms(d)}",
                d,
                kind,
                ctx.evidence(c.line, c.end_line),
                c.printk_span_s if c.printk_span_s is not None else d,
                "printk span from the calling line to the return line"
                if c.printk_span_s is not None
                else "the kernel's `after N usecs` (no calling line to bound it)",
                advice,
                {
                    "threshold_s": limit,
                    "return": c.return_code,
                    "usecs_s": usecs,
                    "printk_span_s": c.printk_span_s,
                    "console_s": _console_inside(ctx, c),
                },
                initcall_knob(ctx, c),
            )
        )
    return out


def root_wait(ctx: Context) -> list[Advisory]:
    """rootdelay= is a fixed sleep (measured gain); rootwait waits for the device to probe
    (upper bound: the device has to be found anyway)."""
    out = []
    for p in ctx.phases_of("rootdelay"):
        out += from_phases(
            ctx,
            "root_wait",
            [p],
            lambda g: f"rootdelay sleeps {ms(g)} before mounting the root filesystem",
            "Remove `rootdelay=` from the kernel command line; if the root device probes "
            "late, `rootwait` waits only as long as needed.",
            knob=remove_kernel_arg(
                "rootdelay",
                "the kernel mounts the root without the fixed sleep; add `rootwait` if the "
                "root device probes late",
            ),
        )
    for p in ctx.phases_of("rootwait"):
        dev = p.detail.get("device")
        out += from_phases(
            ctx,
            "root_wait",
            [p],
            lambda g, dev=dev: f"The kernel waits {ms(g)} for root device {dev}",
            "The root device probes late: look at its host controller's probe (card-detect "
            "debounce, bus scan), build that driver in and probe it early, or boot from "
            "storage that is ready sooner (eMMC instead of SD or USB).",
            "upper_bound",
            knob=none(
                f"the kernel waits for {dev} to appear: probe its controller earlier or boot "
                "from storage that is ready sooner; `rootwait` itself costs nothing"
            ),
        )
    return out
