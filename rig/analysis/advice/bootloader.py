"""U-Boot offenders: the autoboot delay, image verification, decompression, copies."""

from __future__ import annotations

from rig.analysis.advice.context import Context, from_phases, ms
from rig.model.knob import Knob, none, uboot_env
from rig.model.report import Advisory


def _rate(size: int | None, seconds: float) -> str:
    return f" ({size / seconds / 2**20:.1f} MiB/s)" if size and seconds > 0 else ""


def _kernel_size(ctx: Context) -> int | None:
    return next((im.size_bytes for im in ctx.parsed.uboot.images if im.part == "kernel"), None)


def _bootdelay_knob(n: object) -> Knob:
    if n == 0:  # what is left is the key check, which only -2 skips (U-Boot 2016 and later)
        return none(
            "bootdelay is already 0; -2 also skips the key check, on U-Boot 2016 and later "
            "only (older ones take it as -1: no autoboot)"
        )
    return uboot_env(
        "bootdelay", "0", "U-Boot checks once for a key and boots (`setenv bootdelay 0`)"
    )


def uboot_bootdelay(ctx: Context) -> list[Advisory]:
    """Gain: the countdown, from the prompt's first count to the line feed after the last."""
    out = []
    for p in ctx.phases_of("autoboot"):
        n = p.detail.get("bootdelay")
        out += from_phases(
            ctx,
            "uboot_bootdelay",
            [p],
            lambda g, n=n: f"U-Boot waits {ms(g)} for a key press (bootdelay={n})",
            "Set `setenv bootdelay 0; saveenv` (CONFIG_BOOTDELAY=0): one check for a key, "
            "no wait. U-Boot 2016 and later also take -2: boot without checking. Never -1, "
            "which disables autoboot.",
            knob=_bootdelay_knob(n),
        )
    return out


def image_verify(ctx: Context) -> list[Advisory]:
    """Gain: from each `Verifying ... ` to its verdict, console time excluded."""
    return from_phases(
        ctx,
        "image_verify",
        ctx.phases_of("verify"),
        lambda g: f"U-Boot verifies the image checksum/hash: {ms(g)}" + _rate(_kernel_size(ctx), g),
        "`setenv verify n` skips the CRC of legacy images and the hashes of FIT images. "
        "Keep it if every boot must check the image (verified boot, unreliable storage).",
        knob=uboot_env(
            "verify",
            "no",
            "U-Boot skips the legacy image's CRC and the FIT image's hashes; keep it on if "
            "every boot must check the image",
        ),
    )


def kernel_decompress(ctx: Context) -> list[Advisory]:
    """Gain: decompression time; an upper bound, since a bigger image takes longer to read."""
    return from_phases(
        ctx,
        "kernel_decompress",
        ctx.phases_of("uncompress"),
        lambda g: f"Kernel decompression takes {ms(g)}",
        "Boot an uncompressed kernel (uImage of vmlinux.bin / arm64 Image) or a faster "
        "codec (LZ4, LZO). The uncompressed image is two to three times larger: measure "
        "its read time from your storage before and after.",
        "upper_bound",
        knob=none(
            "rebuild the kernel image uncompressed (Image / vmlinux.bin) or with LZ4 or LZO: "
            "the codec is part of the image, not a setting"
        ),
    )


def image_copy(ctx: Context) -> list[Advisory]:
    """Gain: the copy of an uncompressed image to its load address (`Loading Kernel Image`)."""
    return from_phases(
        ctx,
        "image_copy",
        ctx.phases_of("load"),
        lambda g: f"U-Boot copies the kernel to its load address: {ms(g)}",
        "Read the image straight to its load address (or build it for where it is read "
        "to) so U-Boot boots it in place (XIP) instead of moving it.",
        knob=none(
            "read the image to its load address, or rebuild it for the address it is read "
            "to: the addresses are in bootcmd and in the image, not one setting"
        ),
    )
