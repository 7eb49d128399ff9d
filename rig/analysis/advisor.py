"""Run every advisory rule on one analyzed boot, largest gain first. Gains may overlap
(console time is inside every stage): they rank, they do not add up.
"""

from __future__ import annotations

from rig.analysis.advice.bootloader import (
    image_copy,
    image_verify,
    kernel_decompress,
    uboot_bootdelay,
)
from rig.analysis.advice.console import console_output, uboot_console
from rig.analysis.advice.context import Context, Rule
from rig.analysis.advice.kernel import calibrate_delay, root_wait, slow_initcalls
from rig.analysis.advice.probe import usb_kernel, usb_uboot
from rig.model.report import Advisory

RULES: tuple[Rule, ...] = (
    uboot_bootdelay,
    image_verify,
    kernel_decompress,
    image_copy,
    usb_uboot,
    calibrate_delay,
    slow_initcalls,
    usb_kernel,
    root_wait,
    console_output,
    uboot_console,
)


def advise(ctx: Context, rules: tuple[Rule, ...] = RULES) -> list[Advisory]:
    found = [a for rule in rules for a in rule(ctx)]
    kept = [a for a in found if a.gain_s >= ctx.options.min_gain_s]
    return sorted(kept, key=lambda a: (-a.gain_s, a.rule, a.title))
