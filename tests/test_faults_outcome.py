"""Outcome classes from evidence (rig.analysis.outcome), including missing_marker: a boot
that reached its UI is ok unless a hook it shows it has did not fire."""

from __future__ import annotations

import pytest

from rig.analysis.lines import Line
from rig.analysis.outcome import classify as classify_outcome
from rig.analysis.stages import Resolution, Stage
from rig.model import MarkerScan
from rig.model.report import Event

EV = Event("x", 0.1, "gpio", 1e-6)
SCAN = MarkerScan(1_000_000, 10, ("power",), power_up=(5,), power_down=())
LINE = Line(0, 0, 0, b"U-Boot 2009.01", None, None)
PANIC = Line(1, 20, 0, b"[    0.1] Kernel panic - not syncing: VFS", 0.1, None)


def classify(*args: object, **kwargs: object) -> str:
    """The outcome as report.json writes it."""
    return str(classify_outcome(*args, **kwargs))  # type: ignore[arg-type]


BROKEN = Resolution(None, "unseen", broken="kernel_init: ... although the kernel has hooks")
HIDDEN = Resolution(None, "hidden", "hidden by quiet")
NO_HOOK = Resolution(None, "unseen")


def stages(*ends: int, missing: Resolution = NO_HOOK) -> list[Stage]:
    """`ends`: 1 seen, 0 not; a missing end resolves as `missing` says."""
    names = ("bootloader", "kernel", "rootfs_mount", "init", "application")
    return [
        Stage(n, EV, EV if e else None, None, Resolution(EV, "hook") if e else missing)
        for n, e in zip(names, ends, strict=False)
    ]


@pytest.mark.parametrize(
    ("ends", "lines", "rig_error", "expected"),
    [
        ((1, 1, 1, 1, 1), [LINE], None, "ok"),
        ((1, 1, 0, 0, 0), [LINE], None, "hang_in_rootfs_mount"),
        ((0, 0, 0, 0, 0), [LINE], None, "hang_in_bootloader"),
        ((1, 0, 1, 0, 0), [LINE], None, "hang_in_init"),
        ((1, 1, 1, 0, 0), [], None, "console_lost"),
        ((1, 1, 0, 0, 0), [LINE, PANIC], None, "panic"),
        ((1, 1, 1, 1, 1), [LINE], "analyzer_error", "analyzer_error"),
        ((1, 1, 1, 0, 0), [LINE], "console_lost", "console_lost"),
        ((1, 1, 1, 1, 1), [LINE], "rig_error", "rig_error"),
    ],
)
def test_classify(ends: tuple, lines: list[Line], rig_error: str | None, expected: str) -> None:
    assert classify(SCAN, True, lines, stages(*ends), rig_error) == expected


@pytest.mark.parametrize("ends", [(1, 0, 1, 1, 1), (0, 1, 1, 1, 1), (1, 1, 0, 0, 1)])
def test_a_boot_that_reached_its_ui_is_ok_unless_a_hook_it_has_failed(ends: tuple) -> None:
    # No evidence that the missing boundaries had hooks: a board without them.
    assert classify(SCAN, True, [LINE], stages(*ends)) == "ok"
    assert classify(SCAN, True, [LINE], stages(*ends, missing=HIDDEN)) == "ok"
    # A hook of the same layer fired, or the command line configures them: a failure.
    assert classify(SCAN, True, [LINE], stages(*ends, missing=BROKEN)) == "missing_marker"


def test_an_unseen_ui_is_a_hang_unless_its_tag_is_hidden_or_its_hook_failed() -> None:
    assert classify(SCAN, True, [LINE], stages(1, 1, 1, 1, 0)) == "hang_in_application"
    assert classify(SCAN, True, [LINE], stages(1, 1, 1, 1, 0, missing=HIDDEN)) == "missing_marker"
    assert classify(SCAN, True, [LINE], stages(1, 1, 1, 1, 0, missing=BROKEN)) == "missing_marker"


def test_no_power_edge_beats_the_console() -> None:
    no_edge = MarkerScan(1_000_000, 10, ("power",), power_up=(), power_down=())
    assert classify(no_edge, True, [LINE], stages(0, 0, 0, 0, 0)) == "no_power_edge"


def test_an_aborted_run_is_interrupted_whatever_else_it_shows() -> None:
    """Stopped by the operator or a signal: how the run ended, never the board's failure
    class, and before even the rig's own verdict."""
    assert classify(SCAN, True, [LINE], stages(1, 1, 0, 0, 0), aborted=True) == "interrupted"
    assert classify(SCAN, True, [LINE], stages(1, 1, 1, 1, 1), "rig_error", True) == "interrupted"
