"""U-Boot console: banner, autoboot countdown, image headers, load steps, hand-over.

Covers the legacy-image output of the 2009 era (`## Booting kernel from Legacy Image`,
`Verifying Checksum ... OK`, `Uncompressing Kernel Image ... OK`) and the FIT output
of current U-Boot (`## Loading kernel from FIT Image`, `Verifying Hash Integrity ...
sha256+ OK`, `Uncompressing Kernel Image to 40480000`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.lines import Line
from rig.analysis.parsers.bootstage import parse_bootstage
from rig.analysis.parsers.text import clean
from rig.model.sections import Bootstage, Image

_BANNER = re.compile(r"U-Boot(?: (SPL|TPL|VPL))? (\d{4}\.\d{2}\S*)(?: \(([^)]*)\))?")
# The stock prompt, then the countdown "%2d " updated by "\b\b\b%2d " once a second;
# keyed-autoboot boards print "Autobooting in N seconds" instead.
_AUTOBOOT = re.compile(
    r"Hit any key to stop autoboot:|Autoboot(?:ing)? in (\d+) seconds?|"
    r"to (?:abort|stop) autoboot in (\d+) seconds?"
)
_IMAGE = re.compile(
    r"^## (?:Booting|Loading) (?P<part>.+?) from (?P<fmt>Legacy|FIT) Image at (?P<addr>\w+)"
    r"|^## Booting image at (?P<addr2>\w+)"
    r"|^## Flattened Device Tree blob at (?P<fdt>\w+)"
)
_FIELD = re.compile(r"^\s+([A-Z][A-Za-z ()]*?):\s+(.*?)\s*$")
_SIZE = re.compile(r"(\d+) Bytes")
_COMPRESSION = re.compile(r"\((\w+) compressed\)|^(\w+) compressed$|^(uncompressed)$")
_VERIFY = re.compile(r"^\s*(Verifying (?:Checksum|Hash Integrity)) \.\.\.(.*)$")
_UNCOMPRESS = re.compile(r"^\s+Uncompressing (.+?)(?: to \w+)?(?: \.\.\.\s*(.*))?$")
_LOAD = re.compile(r"^\s+(Loading|XIP) ((?:\w+ )*Image)(?: to \w+)?(?: \.\.\.\s*(.*))?$")
_LOAD_TO = re.compile(r"^\s+Loading (Ramdisk|Device Tree) to \w+, end \w+ \.\.\.\s*(.*)$")
_READ_MS = re.compile(r"^\s*(\d+) bytes read in (\d+) ms")
_NAND_READ = re.compile(r"^\s*NAND read: ")
_USB_START = re.compile(r"^\s*starting USB\.\.\.")
_USB_MORE = re.compile(r"^(?:USB\d*:|Bus \S+:|\s*scanning |\s+\d+ USB Device)")
# The kernel's own zImage decompressor, before the kernel proper prints anything.
_ZIMAGE = re.compile(r"^Uncompressing Linux\.\.\.(.*)$")
WORK_KINDS = ("verify", "uncompress", "load", "xip", "load_fdt", "load_ramdisk", "read", "usb")
_STARTING = re.compile(r"^\s*Starting kernel \.\.\.")


@dataclass(frozen=True)
class Banner:
    line: int
    version: str
    phase: str  # "SPL", "TPL", "VPL" or "" for U-Boot proper
    build: str | None


@dataclass(frozen=True)
class Autoboot:
    line: int
    counts: tuple[int, ...]  # the countdown as printed, e.g. (3, 2, 1, 0)

    @property
    def bootdelay(self) -> int:
        return self.counts[0] if self.counts else 0


@dataclass(frozen=True)
class UBootWork:
    """Work U-Boot announces on a line; it ends where the console goes on (`end_line`)."""

    line: int
    kind: str  # verify | uncompress | load | xip | load_fdt | load_ramdisk | read | usb
    text: str
    end_line: int | None  # first line printed after the work (None: the log ends first)
    ok: bool | None  # "OK" seen on the line; None when U-Boot prints no verdict there
    self_us: int | None = None  # U-Boot's own measure ("N bytes read in M ms")
    size_bytes: int | None = None


@dataclass(frozen=True)
class UBootLog:
    banners: tuple[Banner, ...]
    autoboot: Autoboot | None
    images: tuple[Image, ...]
    steps: tuple[UBootWork, ...]  # named for the report's `uboot.steps` key
    starting_kernel: int | None
    bootstage: tuple[Bootstage, ...]


def _verdict(rest: str | None) -> bool | None:
    if rest is None or not rest.strip():
        return None
    low = rest.lower()
    return ("ok" in low or "done" in low) and "bad" not in low and "error" not in low


def _countdown(text: str, m: re.Match[str]) -> tuple[int, ...]:
    first = m.group(1) or m.group(2)
    counts = [int(first)] if first else []
    # Only the countdown itself: digits separated by spaces and backspaces.
    tail = re.match(r"[\s\x08\d]*", text[m.end() :])
    counts += [int(n) for n in re.findall(r"\d+", tail.group(0) if tail else "")]
    return tuple(counts)


def _work(i: int, text: str, n: int) -> UBootWork | None:
    nxt = i + 1 if i + 1 < n else None
    if m := _VERIFY.match(text):
        return UBootWork(i, "verify", text.strip(), nxt, _verdict(m.group(2)))
    if m := _UNCOMPRESS.match(text):
        return UBootWork(i, "uncompress", text.strip(), nxt, _verdict(m.group(2)))
    if m := _LOAD_TO.match(text):
        kind = "load_fdt" if m.group(1) == "Device Tree" else "load_ramdisk"
        return UBootWork(i, kind, text.strip(), nxt, _verdict(m.group(2)))
    if m := _LOAD.match(text):
        kind = "xip" if m.group(1) == "XIP" else "load"
        return UBootWork(i, kind, text.strip(), nxt, _verdict(m.group(3)))
    if m := _READ_MS.match(text):
        # Printed after the read, with U-Boot's own duration: the line is the end.
        us = int(m.group(2)) * 1000
        return UBootWork(i, "read", text.strip(), i, True, us, int(m.group(1)))
    if m := _ZIMAGE.match(text):
        return UBootWork(i, "uncompress", text.strip(), nxt, _verdict(m.group(1)))
    if _NAND_READ.match(text):
        return UBootWork(i, "read", text.strip(), nxt, None)
    return None


def _image(i: int, m: re.Match[str]) -> tuple[int, str, str, str]:
    """(line, format: legacy, fit, fdt or "" when U-Boot does not say, part, address)"""
    if m.group("fdt"):
        return (i, "fdt", "fdt", m.group("fdt"))
    if m.group("addr2"):
        return (i, "", "kernel", m.group("addr2"))
    return (i, m.group("fmt").lower(), m.group("part").lower(), m.group("addr"))


def _with_fields(head: tuple[int, str, str, str], fields: dict[str, str]) -> Image:
    size = _SIZE.search(fields.get("Data Size", ""))
    compression = None
    for key in ("Compression", "Image Type"):
        if m := _COMPRESSION.search(fields.get(key, "")):
            compression = next(g for g in m.groups() if g)
            break
    return Image(*head, int(size.group(1)) if size else None, compression, fields)


def _usb_end(texts: Sequence[str], i: int) -> int | None:
    j = i + 1
    while j < len(texts) and _USB_MORE.match(texts[j]):
        j += 1
    return j if j < len(texts) else None


def parse_uboot(lines: Sequence[Line]) -> UBootLog:
    texts = [clean(ln) for ln in lines]
    banners: list[Banner] = []
    autoboot: Autoboot | None = None
    images: list[tuple[tuple[int, str, str, str], dict[str, str]]] = []
    steps: list[UBootWork] = []
    starting: int | None = None
    fields: dict[str, str] | None = None  # "Key: value" lines of the image being listed
    for i, t in enumerate(texts):
        if fields is not None:
            if m := _FIELD.match(t):
                fields.setdefault(m.group(1), m.group(2))
                continue
            if not t.startswith(" "):
                fields = None  # the indented block is over
        if "U-Boot" in t and (m := _BANNER.search(t)):
            banners.append(Banner(i, m.group(2), m.group(1) or "", m.group(3)))
        elif autoboot is None and (m := _AUTOBOOT.search(t)):
            autoboot = Autoboot(i, _countdown(t, m))
        elif t.startswith("##") and (m := _IMAGE.match(t)):
            fields = {}
            images.append((_image(i, m), fields))
        elif work := _work(i, t, len(texts)):
            steps.append(work)
        elif _USB_START.match(t):
            steps.append(UBootWork(i, "usb", t.strip(), _usb_end(texts, i), None))
        elif starting is None and _STARTING.match(t):
            starting = i
    return UBootLog(
        tuple(banners),
        autoboot,
        tuple(_with_fields(head, f) for head, f in images),
        tuple(steps),
        starting,
        tuple(parse_bootstage(lines)),
    )
