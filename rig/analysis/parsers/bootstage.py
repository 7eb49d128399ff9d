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

from rig.analysis.lines import Line
from rig.analysis.parsers.text import clean
from rig.model.sections import Bootstage, BootstageRow, BootstageTotal

_HEADER = re.compile(r"Timer summary in microseconds(?: \((\d+) records\))?:")
_COLUMNS = re.compile(r"^\s*Mark\s+Elapsed\s+Stage\s*$")
_NUM = r"(\d{1,3}(?:,\d{3})*)"
_ROW = re.compile(rf"^\s*{_NUM}\s+{_NUM}(?:  (.*?))?\s*$")
_ACCUM_HEADER = re.compile(r"^\s*Accumulated time:\s*$")
_ACCUM_ROW = re.compile(rf"^\s+{_NUM}(?:  (.*?))?\s*$")


def _s(text: str) -> float:
    return int(text.replace(",", "")) / 1e6


def _table(texts: Sequence[str], start: int, records: int | None) -> Bootstage:
    rows: list[BootstageRow] = []
    accum: list[BootstageTotal] = []
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
            rows.append(BootstageRow(m.group(3) or "", _s(m.group(1)), _s(m.group(2)), i))
        elif in_accum and (m := _ACCUM_ROW.match(t)):
            accum.append(BootstageTotal(m.group(2) or "", _s(m.group(1))))
        else:
            break
        i += 1
    return Bootstage(start, records, rows, accum)


def parse_bootstage(lines: Sequence[Line]) -> list[Bootstage]:
    """Every timer table on the console (a `bootstage report` command prints another)."""
    texts = [clean(ln) for ln in lines]
    out: list[Bootstage] = []
    for i, t in enumerate(texts):
        if "Timer summary" in t and (m := _HEADER.search(t)):
            out.append(_table(texts, i, int(m.group(1)) if m.group(1) else None))
    return out
