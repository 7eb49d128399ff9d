"""U-Boot offenders: the autoboot delay, image verification, decompression, copies."""

from __future__ import annotations

from rig.analysis.advice.context import Advisory, Context, ms
from rig.analysis.parsers.phase import Phase


def _total(phases: list[Phase]) -> float:
    return sum(p.duration_s for p in phases)


def _rate(size: int | None, seconds: float) -> str:
    return f" ({size / seconds / 2**20:.1f} MiB/s)" if size and seconds > 0 else ""


def _kernel_size(ctx: Context) -> int | None:
    return next((im.size_bytes for im in ctx.parsed.uboot.images if im.part == "kernel"), None)


def uboot_bootdelay(ctx: Context) -> list[Advisory]:
    """Gain: the countdown as measured between its console line and the next one."""
    out = []
    for p in ctx.phases_of("autoboot"):
        n = p.detail.get("bootdelay")
        out.append(
            Advisory(
                "uboot_bootdelay",
                f"U-Boot waits {ms(p.duration_s)} for a key press (bootdelay={n})",
                p.duration_s,
                ctx.evidence(p.line, p.end_line),
                "Set `setenv bootdelay 0; saveenv` (CONFIG_BOOTDELAY=0): one check for a key, "
                "no wait. U-Boot 2016 and later also take -2: boot without checking. Never -1, "
                "which disables autoboot.",
            )
        )
    return out


def image_verify(ctx: Context) -> list[Advisory]:
    """Gain: from each `Verifying ...` line to the next line, console time excluded."""
    phases = ctx.phases_of("verify")
    if not phases:
        return []
    gain = _total(phases)
    return [
        Advisory(
            "image_verify",
            f"U-Boot verifies the image checksum/hash: {ms(gain)}" + _rate(_kernel_size(ctx), gain),
            gain,
            ctx.evidence(*(i for p in phases for i in (p.line, p.end_line))),
            "`setenv verify n` skips the CRC of legacy images and the hashes of FIT images. "
            "Keep it if every boot must check the image (verified boot, unreliable storage).",
        )
    ]


def kernel_decompress(ctx: Context) -> list[Advisory]:
    """Gain: decompression time; an upper bound, since a bigger image takes longer to read."""
    phases = ctx.phases_of("uncompress")
    if not phases:
        return []
    gain = _total(phases)
    return [
        Advisory(
            "kernel_decompress",
            f"Kernel decompression takes {ms(gain)}",
            gain,
            ctx.evidence(*(i for p in phases for i in (p.line, p.end_line))),
            "Boot an uncompressed kernel (uImage of vmlinux.bin / arm64 Image) or a faster "
            "codec (LZ4, LZO). The uncompressed image is two to three times larger: measure "
            "its read time from your storage before and after.",
            "upper_bound",
        )
    ]


def image_copy(ctx: Context) -> list[Advisory]:
    """Gain: the copy of an uncompressed image to its load address (`Loading Kernel Image`)."""
    phases = ctx.phases_of("load")
    if not phases:
        return []
    gain = _total(phases)
    return [
        Advisory(
            "image_copy",
            f"U-Boot copies the kernel to its load address: {ms(gain)}",
            gain,
            ctx.evidence(*(i for p in phases for i in (p.line, p.end_line))),
            "Read the image straight to its load address (or build it for where it is read "
            "to) so U-Boot boots it in place (XIP) instead of moving it.",
        )
    ]
