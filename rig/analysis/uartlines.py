"""Console lines timed by the UART tap: the first start bit of each line on the analyzer.

The host console and the tapped UART carry the same bytes; lines are paired by content
in order, so a byte the host lost (or garbage only one side saw) costs one line, not
the alignment of the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rig.analysis.lines import Line

#: How far ahead to look for a line's twin when the two streams differ.
_WINDOW = 64


def uart_lines(data: bytes, start: np.ndarray) -> list[tuple[bytes, int]]:
    """(line bytes without CR/LF, sample of its first byte's start-bit edge)."""
    out: list[tuple[bytes, int]] = []
    begin = 0
    while begin < len(data):
        nl = data.find(b"\n", begin)
        end = len(data) if nl < 0 else nl
        out.append((data[begin:end].rstrip(b"\r"), int(start[begin])))
        begin = end + 1
    return out


def match_lines(
    lines: Sequence[Line], data: bytes, start: np.ndarray, power_sample: int, samplerate: int
) -> dict[int, float]:
    """Host line index -> reference time (s from the power edge) of its first byte."""
    tapped = uart_lines(data, start)
    out: dict[int, float] = {}
    j = 0
    for line in lines:
        for k in range(j, min(j + _WINDOW, len(tapped))):
            if tapped[k][0] == line.raw:
                out[line.index] = (tapped[k][1] - power_sample) / samplerate
                j = k + 1
                break
    return out
