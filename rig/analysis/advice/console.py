"""Console output cost: the time the serial line was busy with the boot's messages, which
early kernel and U-Boot output make the boot wait for. The cost is the bytes' wire time
(10/baud each), never more than the reads carrying them took to arrive, and only on a
console shown to be paced (docs/analysis.md, "Advisor").
"""

from __future__ import annotations

from rig.analysis.advice.context import Context, ms
from rig.analysis.advice.knobs import kernel_arg
from rig.analysis.parsers.initcall import InitcallLine
from rig.analysis.parsers.text import console_bytes
from rig.analysis.wire import console_busy
from rig.model.knob import uboot_env
from rig.model.report import Advisory

_BASIS = "time over which the reads carrying these bytes arrived"


def _kernel_lines(ctx: Context) -> list[int]:
    stamped = [ln.index for ln in ctx.lines if ln.printk_ts is not None]
    if stamped:
        return stamped
    # printk.time off: the kernel speaks from "Starting kernel ..." to the hand-over.
    k, u = ctx.parsed.kernel, ctx.parsed.uboot
    first = u.starting_kernel + 1 if u.starting_kernel is not None else None
    last = next((r.line for r in (k.run_init, k.freeing) if r is not None), None)
    return list(range(first, last + 1)) if first is not None and last is not None else []


def _status_lines(ctx: Context) -> list[int]:
    """systemd status on the console (not its kmsg copies)."""
    return [u.line for u in ctx.parsed.systemd.units if ctx.lines[u.line].printk_ts is None]


def _paced(ctx: Context) -> bool:
    # A cost needs evidence that the bytes took their wire time: unpaced consoles cost
    # nothing like it, and when no stretch was busy enough to tell, nothing is shown.
    return ctx.pacing.verdict == "paced" and ctx.char_s > 0


def console_output(ctx: Context) -> list[Advisory]:
    cmd = ctx.parsed.kernel.cmdline
    if not _paced(ctx) or (cmd is not None and "quiet" in cmd.args):
        return []
    kernel = _kernel_lines(ctx)
    status = _status_lines(ctx)
    debug = [r.line for r in ctx.parsed.initcalls if isinstance(r, InitcallLine)]
    nbytes = {
        "kernel": sum(console_bytes(ctx.lines, i) for i in kernel),
        "systemd_status": sum(console_bytes(ctx.lines, i) for i in status),
        "initcall_debug": sum(console_bytes(ctx.lines, i) for i in debug),
    }
    busy = console_busy(ctx.chunks, ctx.lines, kernel + status, ctx.baud)
    gain = busy.busy_s
    if gain == 0:
        return []
    debug_s = console_busy(ctx.chunks, ctx.lines, debug, ctx.baud).busy_s
    note = (
        f" {ms(debug_s)} of it is initcall_debug's own output: this boot's kernel time "
        "includes the cost of measuring it; compare against a boot without it."
        if debug
        else ""
    )
    return [
        Advisory(
            "console_output",
            f"Console output costs {ms(gain)} at {ctx.baud} baud",
            gain,
            "estimate",
            ctx.evidence(cmd.line if cmd else None, kernel[0] if kernel else None),
            busy.observed_s,
            _BASIS,
            f"Add `quiet` to the kernel command line: {nbytes['kernel']} kernel bytes and "
            f"{nbytes['systemd_status']} systemd status bytes at {ctx.char_s * 1e6:.1f} us "
            f"each stay off the serial line (logs remain in dmesg and the journal).{note}",
            {
                "baud": ctx.baud,
                "char_s": ctx.char_s,
                "bytes": nbytes,
                "lines": {
                    "kernel": len(kernel),
                    "systemd_status": len(status),
                    "initcall_debug": len(debug),
                },
                "initcall_debug_s": debug_s,
                "wire_s": busy.wire_s,
                "observed_s": busy.observed_s,
                "pacing": ctx.pacing.verdict,
            },
            kernel_arg(
                ctx,
                "quiet",
                None,
                "the console shows only warnings and worse (loglevel 4); the rest stays in "
                "dmesg and the journal",
            ),
        )
    ]


def uboot_console(ctx: Context) -> list[Advisory]:
    """U-Boot's own chatter before the kernel starts (not the countdown's wait)."""
    end = ctx.parsed.uboot.starting_kernel
    if end is None or not _paced(ctx):
        return []
    n = sum(console_bytes(ctx.lines, i) for i in range(end + 1))
    busy = console_busy(ctx.chunks, ctx.lines, range(end + 1), ctx.baud)
    if busy.busy_s == 0:
        return []
    return [
        Advisory(
            "uboot_console",
            f"U-Boot prints {n} bytes: {ms(busy.busy_s)} at {ctx.baud} baud",
            busy.busy_s,
            "estimate",
            ctx.evidence(0, end),
            busy.observed_s,
            _BASIS,
            "Build U-Boot with CONFIG_SILENT_CONSOLE and `setenv silent 1` (keep a way to "
            "get the console back for development).",
            {
                "bytes": n,
                "baud": ctx.baud,
                "wire_s": busy.wire_s,
                "observed_s": busy.observed_s,
                "pacing": ctx.pacing.verdict,
            },
            uboot_env(
                "silent",
                "1",
                "U-Boot prints nothing (the kernel's console is its own); works only on a "
                "U-Boot built with CONFIG_SILENT_CONSOLE, which ignores the variable otherwise",
            ),
        )
    ]
