"""Console chunks -> lines, each with the host arrival time of its first byte."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from rig import names
from rig.model import Chunk

# printk's "[    1.234567] " prefix, optionally with a caller id "[    T1]", optionally
# after a "<6>" loglevel.
_PRINTK = re.compile(rb"^(?:<\d>)?\[\s*(\d+)\.(\d{6})\](?:\[\s*[TC]\d+\])?\s?")
#: What of a line is parsed as text: printk cuts lines at 1024 bytes, so a longer one is
#: line noise (a floating RX, a wrong baud rate), kept whole in `raw` but not decoded.
MAX_PARSED = 4096


@dataclass(frozen=True)
class Line:
    index: int
    offset: int  # byte offset of the first byte in the console stream
    t_ns: int  # host arrival of the chunk that carried the first byte
    raw: bytes  # without the line terminator
    printk_ts: float | None  # printk timestamp in seconds, when the line has one
    tag: str | None  # marker name when the line carries the bootrig tag

    @property
    def overlong(self) -> bool:
        return len(self.raw) > MAX_PARSED

    @cached_property
    def text(self) -> str:
        """The line as text; of an overlong line its first MAX_PARSED bytes."""
        return self.raw[:MAX_PARSED].decode("utf-8", "backslashreplace")

    @cached_property
    def body(self) -> str:
        """The text without a printk prefix."""
        m = _PRINTK.match(self.raw)
        return self.raw[m.end() if m else 0 : MAX_PARSED].decode("utf-8", "backslashreplace")


def _make(index: int, offset: int, t_ns: int, raw: bytes) -> Line:
    raw = raw.rstrip(b"\r")
    m = _PRINTK.match(raw)
    ts = int(m.group(1)) + int(m.group(2)) / 1e6 if m else None
    tag = names.TAG_RE.search(raw)  # all of it: noise before a tag must not hide it
    marker = names.canonical_marker(tag.group(1).decode("ascii")) if tag else None
    return Line(index, offset, t_ns, raw, ts, marker)


def split_lines(chunks: Sequence[Chunk]) -> list[Line]:
    """Split the byte stream at LF; a line's time is that of its first byte's chunk.
    Nothing is dropped: a last line without LF is a line, bytes not UTF-8 stay in `raw`."""
    lines: list[Line] = []
    buf = bytearray()
    start_off = 0
    start_t: int | None = None
    offset = 0
    for chunk in chunks:
        data = chunk.data
        pos = 0
        while pos < len(data):
            if start_t is None:
                start_t, start_off = chunk.t_ns, offset + pos
            nl = data.find(b"\n", pos)
            if nl < 0:
                buf += data[pos:]
                break
            buf += data[pos:nl]
            lines.append(_make(len(lines), start_off, start_t, bytes(buf)))
            buf.clear()
            start_t = None
            pos = nl + 1
        offset += len(data)
    if start_t is not None:
        lines.append(_make(len(lines), start_off, start_t, bytes(buf)))
    return lines


def stand_in_reads(lines: Sequence[Line]) -> list[Chunk]:
    """Reads when only lines are known: by each line's arrival its first byte and the
    bytes before it had come, nothing later (pauses inside a line are then invisible,
    and the last line's bytes after its first are not timed)."""
    out, done = [], 0
    for ln in lines:
        out.append(Chunk(ln.t_ns, b"\0" * (ln.offset + 1 - done)))
        done = ln.offset + 1
    return out


#: The kernel's message once its console is registered ("printk: " since 5.10); a boot
#: console's ("bootconsole [...]") is not it.
# Newer kernels (6.12 among them) announce a console that is not nbcon as "legacy".
_CONSOLE_ENABLED = re.compile(r"^(?:printk: )?(?:legacy )?console \[[^\]]+\] enabled\s*$")
_BOOTCONSOLE = re.compile(r"^(?:printk: )?(?:legacy )?bootconsole \[[^\]]+\] enabled")


def kernel_backlog(lines: Sequence[Line]) -> frozenset[int]:
    """The lines the kernel logged before its console was registered, sent at once when it
    was: their stamps are when they were logged, not when they could leave. Empty when a
    boot console (`earlycon`) printed them as they came."""
    for ln in lines:
        if _BOOTCONSOLE.match(ln.body):
            return frozenset()
        if ln.printk_ts is not None and _CONSOLE_ENABLED.match(ln.body):
            reg = ln.printk_ts
            return frozenset(
                x.index for x in lines[: ln.index] if x.printk_ts is not None and x.printk_ts <= reg
            )
    return frozenset()
