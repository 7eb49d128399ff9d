"""Console lines placed on the report's reference clock, for the timeline."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rig.analysis.lines import split_lines
from rig.artifacts.rundir import read_console
from rig.model.report import Report


@dataclass(frozen=True)
class ConsoleLine:
    index: int
    t_s: float
    uncertainty_s: float | None
    source: str  # "uart", "printk" (through the clock fit) or "host" (serial arrival)
    text: str
    tag: str | None  # bootrig marker name, when the line carries the tag


def console_lines(report: Report, folder: Path) -> list[ConsoleLine]:
    """The folder's console, each line at the time the analysis gave it (`console_times`)."""
    times = {c.line: c for c in report.console_times}
    out = []
    for line in split_lines(read_console(folder)):
        c = times.get(line.index)
        if c is not None:
            out.append(ConsoleLine(line.index, c.t_s, c.uncertainty_s, c.source,
                                   line.text, line.tag))  # fmt: skip
    return out
