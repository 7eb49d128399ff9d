"""Text of a console line as the parsers see it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rig.analysis.lines import Line

# Colour and cursor escapes (systemd's "[  OK  ]" is green on a tty).
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def clean(line: Line) -> str:
    """The body (printk prefix removed), without ANSI escapes and NULs.

    Decoding never fails: bytes that are not UTF-8 become `\\xNN` escapes, so a garbled
    line simply does not match anything.
    """
    text = line.body
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text


def console_bytes(lines: Sequence[Line], index: int) -> int:
    """Bytes the console sent for line `index`, its terminator included."""
    if index + 1 < len(lines):
        return lines[index + 1].offset - lines[index].offset
    return len(lines[index].raw)
