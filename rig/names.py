"""Names that tools outside the rig rely on (docs/contract.md). Extend, never rename."""

from __future__ import annotations

import re
from pathlib import Path

RUN_SCHEMA = "bootrig.run/1"
REPORT_SCHEMA = "bootrig.report/1"
TRUTH_SCHEMA = "bootrig.truth/1"

#: Analyzer channel names a capture written by the rig carries.
POWER = "power"
MARKERS = ("bootm", "do_mount_root", "kernel_init", "ui_ready")
UART_TX = "uart_tx"
CHANNELS = (POWER, *MARKERS, UART_TX)
#: Old kernels call the kernel_init boundary init_post; both name the same point.
MARKER_ALIASES = {"init_post": "kernel_init"}

#: The run.json `timing.steps` title of the power-on command, every power driver's
#: `on()` (rig.steps): a console-only run's t = 0 is its stamp, and the step's end bounds
#: when the rail rose.
POWER_ON_STEP = "power on"

#: The whole boot (power-on to UI) where a stage's name may stand: compare, trend, bisect's
#: --stage, soak statistics, Robot keywords. Its seconds are `power_to_ui_s`.
TOTAL = "power_to_ui"
#: A soak's or a bisect's journal, in its folder.
JOURNAL = "journal.jsonl"
#: The rig config a command reads when none is named (relative to where it runs).
DEFAULT_CONFIG = Path("config/rig.toml")

#: An advisory's knob (report.json `advisories[].knob`, docs/analysis.md "Knobs"): what
#: `rig try` turns to apply it. `kind`: where the setting lives; `op`: what happens to it.
KNOB_KERNEL_ARG = "kernel_arg"  # an argument on the kernel command line
KNOB_UBOOT_ENV = "uboot_env"  # a U-Boot environment variable
KNOB_NONE = "none"  # nothing the rig can set: `why` says what a person must do
KNOB_KINDS = (KNOB_KERNEL_ARG, KNOB_UBOOT_ENV, KNOB_NONE)
KNOB_SET = "set"  # name=value (a bare flag when value is null); one of that name is replaced
KNOB_REMOVE = "remove"  # every argument of that name goes
KNOB_OPS = (KNOB_SET, KNOB_REMOVE)

#: The console tag every firmware hook prints next to its GPIO toggle.
TAG_RE = re.compile(rb"bootrig: marker ([A-Za-z0-9_]+)")


def canonical_marker(name: str) -> str:
    return MARKER_ALIASES.get(name, name)
