"""Console lines placed on the report's reference clock, for the timeline."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.analysis.lines import split_lines
from rig.artifacts.rundir import read_console

#: printk prints microseconds, truncated.
PRINTK_RESOLUTION_S = 1e-6


@dataclass(frozen=True)
class ConsoleLine:
    index: int
    t_s: float
    uncertainty_s: float
    source: str  # "printk" (through the clock fit) or "host" (serial arrival)
    text: str
    tag: str | None  # bootrig marker name, when the line carries the tag


def line_time(
    report: dict[str, Any], printk_s: float | None, arrival_ns: int
) -> tuple[float, float, str]:
    """(t_s, uncertainty_s, source) of a console line, from the clocks in the report.

    Same rule as the analysis (rig.analysis.events.line_event): the printk stamp
    through the fit when there is one, else the arrival through the host clock band.
    The fit's per-time bound is not in the report, so 3x its scatter is used.
    """
    clocks = report.get("clocks") or {}
    fit = clocks.get("printk")
    if printk_s is not None and fit:
        u = 3 * float(fit.get("scatter_s") or 0.0) + PRINTK_RESOLUTION_S
        return fit["offset_s"] + fit["slope"] * printk_s, u, "printk"
    host = clocks["host"]
    return (
        arrival_ns / 1e9 - (host["low_s"] + host["high_s"]) / 2,
        float(host["uncertainty_s"]),
        "host",
    )


def console_lines(report: dict[str, Any], folder: Path) -> list[ConsoleLine]:
    """The folder's console, each line timed; empty without console or host clock."""
    if not (report.get("clocks") or {}).get("host"):
        return []
    out = []
    for line in split_lines(read_console(folder)):
        t, u, source = line_time(report, line.printk_ts, line.t_ns)
        out.append(ConsoleLine(line.index, t, u, source, line.text, line.tag))
    return out
