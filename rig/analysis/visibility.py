"""What a boot's artifacts show about its hooks, and what hides them: which layers carry
hooks (so a missing marker there is a failed hook), whether `quiet` hides the level-5
tags, whether the kernel ran init from an initramfs without a root mount
(docs/analysis.md, "Boundaries without hooks").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rig.analysis.lines import Line
from rig.analysis.parsers.text import clean
from rig.model.report import Event

LAYERS = {
    "bootm": "bootloader",
    "do_mount_root": "kernel",
    "kernel_init": "kernel",
    "ui_ready": "userspace",
}
#: Sources of a marker event that come from its own hook (not a stand-in).
HOOK_SOURCES = ("gpio", "uart", "printk", "host")

_STARTING_KERNEL = re.compile(r"^Starting kernel \.\.\.")
_LEVEL5 = re.compile(r"^(Linux version |Kernel command line: )")
_CMDLINE_HOOKS = re.compile(r"^Kernel command line: .*\bbootrig\.(gpios|pl061)=")
_VFS = re.compile(r"^VFS: Mounted root \(")
_UNPACK = re.compile(r"^(Trying to unpack rootfs image as initramfs|Freeing initrd memory)")
_RUN_RDINIT = re.compile(r"^Run /init as init process")
# Diagnostics the hooks print themselves (the tag lines are not among them).
_KERNEL_DIAG = re.compile(r"^bootrig: (?!marker )")
_UI_READY_DIAG = re.compile(r"^ui-ready: ")


@dataclass(frozen=True)
class Visibility:
    hooks: dict[str, str] = field(default_factory=dict)  # layer -> first evidence of hooks
    tags_hidden: str | None = None  # why level-5 tags cannot reach the console
    initramfs: str | None = None  # the line showing an initramfs boot without a root mount
    kernel_ran: bool = False  # its output, or a U-Boot hand-over with output after it


def _kernel_ran(lines: Sequence[Line], texts: Sequence[str]) -> bool:
    if any(ln.printk_ts is not None for ln in lines):
        return True
    start = next((i for i, t in enumerate(texts) if _STARTING_KERNEL.match(t)), None)
    return start is not None and any(t.strip() for t in texts[start + 1 :])


def _hooks(texts: Sequence[str], lines: Sequence[Line], events: Sequence[Event]) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in events:
        layer = LAYERS.get(e.name)
        if layer and e.source in HOOK_SOURCES and layer not in out:
            out[layer] = f"{e.name} {'edge' if e.source == 'gpio' else 'tag'}"
    for ln, t in zip(lines, texts, strict=True):
        if "kernel" not in out and _CMDLINE_HOOKS.match(t):
            out["kernel"] = "bootrig. parameters on the kernel command line"
        elif _KERNEL_DIAG.match(t) and not ln.tag:
            layer = "kernel" if ln.printk_ts is not None else "bootloader"
            out.setdefault(layer, f"hook message {t[:80]!r}")
        elif _UI_READY_DIAG.match(t):
            out.setdefault("userspace", f"hook message {t[:80]!r}")
    return out


def _tags_hidden(texts: Sequence[str], ran: bool) -> str | None:
    if not ran or any(_LEVEL5.match(t) for t in texts):
        return None
    return (
        "the kernel printed no KERN_NOTICE line (no `Linux version`): `quiet`, or "
        "`loglevel=` 5 or less, keeps level 5 off the console, and the kernel's tags and "
        "ui-ready's /dev/kmsg tag are level 5"
    )


def _initramfs(texts: Sequence[str]) -> str | None:
    if any(_VFS.match(t) for t in texts):
        return None
    unpack = next((t for t in texts if _UNPACK.match(t)), None)
    if unpack is not None:
        return unpack
    return next((t for t in texts if _RUN_RDINIT.match(t)), None)


def visibility(lines: Sequence[Line], events: Sequence[Event]) -> Visibility:
    texts = [clean(ln) for ln in lines]
    ran = _kernel_ran(lines, texts) or any(
        e.name in ("do_mount_root", "kernel_init", "ui_ready") for e in events
    )
    return Visibility(
        _hooks(texts, lines, events), _tags_hidden(texts, ran), _initramfs(texts), ran
    )
