"""QEMU's `pl061_set_output` trace (the log backend with `-msg timestamp=on`):

    8593@1795456589.501931:pl061_set_output /machine/unattached/device[6] setting output 0 to 1

pid, then QEMU's wall-clock time in microseconds, then the GPIO line and its new level.
These are the emulated board's "probe" edges: the reference a logic analyzer would give.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rig.errors import ArtifactError

_LINE = re.compile(
    r"^(\d+)@(\d+)\.(\d{6}):pl061_set_output (\S+) setting output (\d+) to (\d+)\s*$"
)


@dataclass(frozen=True)
class GpioEdge:
    wall_us: int
    line: int
    level: int


def parse_trace(path: Path) -> list[GpioEdge]:
    """Every level change in the file, in file order; other trace events are skipped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise ArtifactError(f"{path}: {e.strerror or e}") from None
    out: list[GpioEdge] = []
    for n, line in enumerate(text.splitlines(), 1):
        if "pl061_set_output" not in line:
            continue
        m = _LINE.match(line)
        if not m:
            raise ArtifactError(f"{path}:{n}: not a pl061_set_output line: {line[:120]!r}")
        wall = int(m.group(2)) * 1_000_000 + int(m.group(3))
        out.append(GpioEdge(wall, int(m.group(5)), 1 if int(m.group(6)) else 0))
    return out


def rising_edges(edges: list[GpioEdge], after_us: int) -> dict[int, list[int]]:
    """Rising edges per line (wall µs) at or after `after_us`: what the hooks raised."""
    level: dict[int, int] = {}
    out: dict[int, list[int]] = {}
    for e in edges:
        if e.level and not level.get(e.line, 0) and e.wall_us >= after_us:
            out.setdefault(e.line, []).append(e.wall_us)
        level[e.line] = e.level
    return out
