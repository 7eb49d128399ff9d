from __future__ import annotations

import numpy as np

from rig.analysis.lines import split_lines
from rig.analysis.uartlines import match_lines
from rig.model import Chunk


def test_lines_pair_by_content_and_survive_a_lost_line() -> None:
    data = b"U-Boot\r\n[    0.000100] one\r\ngarbage\xff\r\nStarting application\r\n"
    start = np.arange(len(data), dtype=np.int64) * 87 + 1000
    # The host lost the garbage line: the rest must still pair.
    host = data.replace(b"garbage\xff\r\n", b"")
    lines = split_lines([Chunk(1, host)])
    got = match_lines(lines, data, start, power_sample=1000, samplerate=1_000_000)
    starts = {0: 0, 1: 8, 2: data.index(b"Starting")}
    assert got == {i: starts[i] * 87 / 1e6 for i in starts}
