from __future__ import annotations

import pytest

from rig.analysis.lines import Line, split_lines
from rig.analysis.parsers.uboot import parse_uboot
from rig.model import Chunk
from tests.test_parse_replay import load


def _lines(*texts: str) -> list[Line]:
    return split_lines([Chunk(0, "\r\n".join(texts).encode() + b"\r\n")])


def test_ecovec_2009_legacy_image() -> None:
    u = parse_uboot(load("ecovec-2009.01-2.6.31").lines)
    assert [(b.version, b.phase, b.build) for b in u.banners] == [
        ("2009.01", "", "Oct 12 2010 - 09:14:02")
    ]
    assert u.autoboot is not None and u.autoboot.counts == (1, 0) and u.autoboot.bootdelay == 1
    (im,) = u.images
    assert (im.format, im.part, im.address) == ("legacy", "kernel", "a0100000")
    assert im.size_bytes == 1863168 and im.compression == "gzip"
    assert im.fields["Image Name"] == "Linux-2.6.31"
    assert [(s.kind, s.ok, s.end_line == s.line + 1) for s in u.steps] == [
        ("verify", True, True),
        ("uncompress", True, True),
    ]
    assert u.starting_kernel is not None
    assert u.bootstage == ()


def test_imx8_2023_spl_fit_and_read() -> None:
    lines = load("imx8mm-2023.04-6.1-systemd").lines
    u = parse_uboot(lines)
    assert [(b.phase, b.version) for b in u.banners] == [("SPL", "2023.04"), ("", "2023.04")]
    assert u.autoboot is not None and u.autoboot.counts == (2, 1, 0)
    assert [(i.format, i.part, i.size_bytes, i.compression) for i in u.images] == [
        ("fit", "kernel", 11287642, "gzip"),
        ("fit", "fdt", 53817, "uncompressed"),
    ]
    kinds = [s.kind for s in u.steps]
    # "Loading Environment from MMC... OK" is not an image step.
    assert kinds == ["read", "verify", "verify", "uncompress", "load_fdt"]
    read = u.steps[0]
    assert read.self_us == 134_000 and read.size_bytes == 11390140 and read.end_line == read.line
    unc = u.steps[3]
    assert unc.text == "Uncompressing Kernel Image to 40200000" and unc.ok is None
    assert lines[unc.end_line or 0].text.strip().startswith("Loading Device Tree")


def test_usb_start_spans_its_scan_output() -> None:
    u = parse_uboot(load("stm32mp1-2023.04-bootstage").lines)
    usb = next(s for s in u.steps if s.kind == "usb")
    assert usb.end_line == usb.line + 4  # Bus ..., scanning bus ..., scanning usb for storage
    load_step = next(s for s in u.steps if s.kind == "load")
    assert load_step.text == "Loading Kernel Image to c0008000"


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("Hit any key to stop autoboot:  3 \b\b\b 2 \b\b\b 1 \b\b\b 0 ", (3, 2, 1, 0)),
        ("Hit any key to stop autoboot:  0 ", (0,)),
        ("Hit any key to stop autoboot: 10 \b\b\b 9 ", (10, 9)),
        ('Autobooting in 3 seconds, press "<Esc><Esc>" to stop', (3,)),
        ("Press SPACE to abort autoboot in 2 seconds", (2,)),
    ],
)
def test_autoboot_forms(text: str, counts: tuple[int, ...]) -> None:
    u = parse_uboot(_lines("Net:   eth0", text, "## Booting kernel from Legacy Image at 1 ..."))
    assert u.autoboot is not None and u.autoboot.line == 1
    assert u.autoboot.counts == counts


def test_step_forms_and_verdicts() -> None:
    u = parse_uboot(
        _lines(
            "## Booting image at 80000000 ...",
            "   Verifying Checksum ... Bad Data CRC",
            "## Loading init Ramdisk from Legacy Image at 88000000 ...",
            "   Loading Ramdisk to 8fe6f000, end 8ffff3c0 ... OK",
            "   XIP Kernel Image ... OK",
            "   Loading Kernel Image ... OK",
            "Uncompressing Linux... done, booting the kernel.",
            "NAND read: device 0 offset 0x200000, size 0x300000",
            " 3145728 bytes read: OK",
            "## Flattened Device Tree blob at 83000000",
            "Loading Environment from NAND... OK",
        )
    )
    assert [(s.kind, s.ok) for s in u.steps] == [
        ("verify", False),
        ("load_ramdisk", True),
        ("xip", True),
        ("load", True),
        ("uncompress", True),
        ("read", None),
    ]
    assert [(i.format, i.part) for i in u.images] == [
        ("", "kernel"),
        ("legacy", "init ramdisk"),
        ("fdt", "fdt"),
    ]


def test_last_line_step_has_no_end() -> None:
    u = parse_uboot(_lines("   Uncompressing Kernel Image ... "))
    assert u.steps[0].end_line is None


def test_garbage_before_banner() -> None:
    lines = split_lines([Chunk(0, b"\x00\xff\xfe\x80U-Boot 2009.01 (Oct 12 2010 - 09:14:02)\r\n")])
    assert parse_uboot(lines).banners[0].version == "2009.01"
