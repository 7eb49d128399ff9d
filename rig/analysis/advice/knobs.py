"""The knob of an advisory from this boot's evidence (docs/analysis.md, "Knobs"): a kernel
argument never proposed when the command line already has it, and initcall_blacklist=
only for initcalls that can be left out without losing the console, the root device,
pins, clocks or what the UI shows."""

from __future__ import annotations

import re

from rig import names
from rig.analysis.advice.context import Context
from rig.model.knob import Knob, none
from rig.model.report import Initcall


def kernel_arg(ctx: Context, name: str, value: str | None, text: str) -> Knob:
    """Set `name[=value]`; `none` when this boot's command line already has exactly it
    (booting with it again would measure nothing)."""
    cmd = ctx.parsed.kernel.cmdline
    if cmd is not None and name in cmd.args and cmd.args[name] == value:
        arg = name if value is None else f"{name}={value}"
        return none(f"`{arg}` is already on this boot's kernel command line")
    return Knob(names.KNOB_KERNEL_ARG, text, names.KNOB_SET, name, value)


def remove_kernel_arg(name: str, text: str) -> Knob:
    return Knob(names.KNOB_KERNEL_ARG, text, names.KNOB_REMOVE, name)


# Optional subsystems: sound, Bluetooth, wireless LAN, NFC. A boot reaches its shell and
# its UI without them, unless the product is about them (then `rig try` shows it: the
# UI's tag never comes).
_OPTIONAL = re.compile(
    r"(?:^|_)(?:snd|alsa|sound|soundcore|bt|bluetooth|btusb|rfcomm|l2cap|bnep|hidp|cfg80211"
    r"|mac80211|ieee80211|wlan|rfkill|nfc)(?:_|$)",
    re.IGNORECASE,
)
# What a boot needs even when a name above matches (a Bluetooth UART driver, a sound
# card's clock or pins): the console, storage the root may be on, pins, clocks, power,
# buses, display and input.
_NEEDED = re.compile(
    r"tty|serial|uart|console|gpio|pinctrl|pinmux|clk|clock|regulator|pmic|power|i2c|spi"
    r"|mmc|sdhci|ata|scsi|nvme|blk|block|virtio|mtd|nand|ubi|fs|fb|drm|lcd|display|panel"
    r"|backlight|input|touch|kbd|key|hid_init|platform|chr_dev",
    re.IGNORECASE,
)


def initcall_knob(ctx: Context, c: Initcall) -> Knob:
    """`initcall_blacklist=<symbol>` only for a built-in, synchronous initcall whose name
    belongs to an optional subsystem and to nothing a boot needs; `none` otherwise.
    Names alone do not prove it safe: `rig try` boots with it and the UI's tag decides."""
    if c.module:
        return none(
            f"built as module {c.module}: load it after the UI (or not at all) instead of "
            "blacklisting its init"
        )
    if c.async_cookie is not None:
        return none(
            "an async function, not an initcall: initcall_blacklist cannot name it; remove "
            "what waits for it"
        )
    if c.name.startswith("0x"):
        return none("the kernel printed no symbol name (no KALLSYMS) to blacklist")
    fn = c.function or c.name
    if not _OPTIONAL.search(fn) or _NEEDED.search(fn):
        return none(
            f"{fn} is not of an optional subsystem (sound, Bluetooth, wireless, NFC): it may "
            "be needed for the console, the root device, pins, clocks or the UI. Build it as "
            "a module loaded after the UI, or make its probe asynchronous"
        )
    # The kernel compares the printed symbol (an __initstub__ name on 5.17+ stub builds).
    cmd = ctx.parsed.kernel.cmdline
    had = cmd.args.get("initcall_blacklist") if cmd is not None else None
    value = f"{had},{c.name}" if had else c.name
    return kernel_arg(
        ctx,
        "initcall_blacklist",
        value,
        f"the kernel skips {fn} (returns -EPERM): {fn}'s subsystem is optional, so check "
        "that the product works without it",
    )
