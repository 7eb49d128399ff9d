"""U-Boot's own timer table (CONFIG_BOOTSTAGE_REPORT), printed before booting the OS.

    Timer summary in microseconds (11 records):
           Mark    Elapsed  Stage
              0          0  reset
        224,599    224,599  board_init_f
    ...
    Accumulated time:
                    10,015  dm_r

`Mark` is microseconds since reset on U-Boot's timer, `Elapsed` the time since the
previous mark; accumulated rows are totals of repeated stages (driver model, ...).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.lines import Line
from rig.analysis.parsers.text import clean

_HEADER = re.compile(r"Timer summary in microseconds(?: \((\d+) records\))?:")
_COLUMNS = re.compile(r"^\s*Mark\s+Elapsed\s+Stage\s*$")
_NUM = r"(\d{1,3}(?:,\d{3})*)"
_ROW = re.compile(rf"^\s*{_NUM}\s+{_NUM}(?:  (.*?))?\s*$")
_ACCUM_HEADER = re.compile(r"^\s*Accumulated time:\s*$")
_ACCUM_ROW = re.compile(rf"^\s+{_NUM}(?:  (.*?))?\s*$")


@dataclass(frozen=True)
class BootstageRow:
    line: int
    mark_us: int
    elapsed_us: int
    stage: str  # "" when U-Boot had no name for the record


@dataclass(frozen=True)
class BootstageAccum:
    line: int
    total_us: int
    stage: str


@dataclass(frozen=True)
class BootstageReport:
    line: int  # the "Timer summary" line
    records: int | None  # as declared in the header (newer U-Boot only)
    rows: tuple[BootstageRow, ...]
    accumulated: tuple[BootstageAccum, ...]


def _us(text: str) -> int:
    return int(text.replace(",", ""))


def _table(texts: Sequence[str], start: int, records: int | None) -> BootstageReport:
    rows: list[BootstageRow] = []
    accum: list[BootstageAccum] = []
    in_accum = False
    i = start + 1
    while i < len(texts):
        t = texts[i]
        if _COLUMNS.match(t):
            pass
        elif _ACCUM_HEADER.match(t):
            in_accum = True
        elif not t.strip():
            if in_accum and accum:
                break  # the blank line after the accumulated rows ends the table
        elif not in_accum and (m := _ROW.match(t)):
            rows.append(BootstageRow(i, _us(m.group(1)), _us(m.group(2)), m.group(3) or ""))
        elif in_accum and (m := _ACCUM_ROW.match(t)):
            accum.append(BootstageAccum(i, _us(m.group(1)), m.group(2) or ""))
        else:
            break
        i += 1
    return BootstageReport(start, records, tuple(rows), tuple(accum))


def parse_bootstage(lines: Sequence[Line]) -> list[BootstageReport]:
    """Every timer table on the console (a `bootstage report` command prints another)."""
    texts = [clean(ln) for ln in lines]
    out: list[BootstageReport] = []
    for i, t in enumerate(texts):
        if "Timer summary" in t and (m := _HEADER.search(t)):
            out.append(_table(texts, i, int(m.group(1)) if m.group(1) else None))
    return out
