"""Outcome classes from evidence (rig.analysis.outcome), including missing_marker."""

from __future__ import annotations

import pytest

from rig.analysis.events import Event
from rig.analysis.lines import Line
from rig.analysis.outcome import classify
from rig.analysis.stages import Stage
from rig.model import MarkerScan

EV = Event("x", 0.1, "gpio", 1e-6)
SCAN = MarkerScan(1_000_000, 10, ("power",), power_up=(5,), power_down=())
LINE = Line(0, 0, 0, b"U-Boot 2009.01", None, None)
PANIC = Line(1, 20, 0, b"[    0.1] Kernel panic - not syncing: VFS", 0.1, None)


def stages(*ends: int) -> list[Stage]:
    names = ("bootloader", "kernel", "rootfs_mount", "init", "application")
    return [Stage(n, EV, EV if e else None) for n, e in zip(names, ends, strict=False)]


@pytest.mark.parametrize(
    ("ends", "lines", "rig_error", "expected"),
    [
        ((1, 1, 1, 1, 1), [LINE], None, "ok"),
        ((1, 1, 0, 0, 0), [LINE], None, "hang_in_rootfs_mount"),
        ((0, 0, 0, 0, 0), [LINE], None, "hang_in_bootloader"),
        ((1, 0, 1, 1, 1), [LINE], None, "missing_marker"),
        ((0, 1, 1, 1, 1), [LINE], None, "missing_marker"),
        ((1, 1, 0, 0, 1), [LINE], None, "missing_marker"),
        ((1, 1, 1, 0, 0), [], None, "console_lost"),
        ((1, 1, 0, 0, 0), [LINE, PANIC], None, "panic"),
        ((1, 1, 1, 1, 1), [LINE], "analyzer_error", "analyzer_error"),
        ((1, 1, 1, 0, 0), [LINE], "console_lost", "console_lost"),
        ((1, 1, 1, 1, 1), [LINE], "rig_error", "rig_error"),
    ],
)
def test_classify(ends: tuple, lines: list[Line], rig_error: str | None, expected: str) -> None:
    assert classify(SCAN, True, lines, stages(*ends), rig_error) == expected


def test_no_power_edge_beats_the_console() -> None:
    no_edge = MarkerScan(1_000_000, 10, ("power",), power_up=(), power_down=())
    assert classify(no_edge, True, [LINE], stages(0, 0, 0, 0, 0)) == "no_power_edge"
