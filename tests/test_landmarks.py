"""The reference landmark calibration (rig/analysis/landmarks-linux-6.1-arm64.json) is what
bench/landmark_offsets.py measures, and a landmark's time follows from its line, its
offset and the console's pacing. (Each kernel's calibration: test_landmark_kernels.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.landmark_offsets import measure
from rig.analysis.events import Timebase
from rig.analysis.hostclock import host_only
from rig.analysis.kernelid import KernelId
from rig.analysis.landmark_calibration import (
    CALIBRATION,
    Calibration,
    Offset,
    load_calibration,
)
from rig.analysis.landmarks import LANDMARKS, find_landmarks, landmark_events
from rig.analysis.lines import Line
from rig.analysis.visibility import visibility
from tests.e2e import REPO

DATA = json.loads(CALIBRATION.read_text())


def test_every_landmark_is_calibrated_on_enough_boots() -> None:
    cal = load_calibration()
    assert set(cal.offsets) == {lm.key for lm in LANDMARKS}
    assert all(o.n >= 10 and o.uncertainty_s > 0 for o in cal.offsets.values())
    assert DATA["target"]["name"].startswith("qemu-arm64")
    assert set(DATA["boots"]) >= {"capture-1", "capture-2"}


@pytest.mark.parametrize("boot", ["capture-1", "capture-2", "initcall-debug-1"])
def test_the_committed_calibration_boots_measure_as_recorded(boot: str) -> None:
    assert DATA["boots"][boot] == "tests/data/real"
    measured = measure(REPO / "tests" / "data" / "real" / boot)
    # Every landmark of the file's own target was measured on it; one calibrated on
    # another target (its own `target`: systemd's, on the systemd variant) has its boots.
    calibrated = {k: c for k, c in DATA["landmarks"].items() if boot in c["boots"]}
    assert set(calibrated) == {k for k, c in DATA["landmarks"].items() if "target" not in c}
    for key, c in calibrated.items():
        assert measured[key]["offset_s"] == pytest.approx(c["boots"][boot], abs=1e-9), key


def _line(i: int, text: str, t_ns: int, ts: float | None = None) -> Line:
    raw = (f"[{ts:12.6f}] " if ts is not None else "").encode() + text.encode()
    return Line(i, i * 100, t_ns, raw, ts, None)


TAG = Line(1, 100, 1_100_000_000, b"[    0.500000] bootrig: marker kernel_init", 0.5, "kernel_init")
LINES = [
    _line(0, "Starting kernel ...", 1_000_000_000),
    TAG,
    _line(2, "Run /init as init process", 1_200_000_000, 0.6),
]


def test_tag_lines_are_never_landmarks_and_the_printk_prefix_is_ignored() -> None:
    found = find_landmarks(LINES)
    assert set(found) == {"uboot_starting_kernel", "run_init"}
    assert found["run_init"].index == 2


@pytest.mark.parametrize(("paced", "shift"), [(False, 0.0), (True, 1.0), (None, 0.5)])
def test_a_paced_console_adds_the_bytes_between_hook_and_message(
    paced: bool | None, shift: float
) -> None:
    char_s = 10 / 115200
    cal = Calibration(
        "t",
        {"uboot_starting_kernel": Offset("uboot_starting_kernel", 0.01, 0.002, 100, 9)},
        "6.1",
        "arm64",
    )
    tb = Timebase("host", None, None, None, host_only(0, char_s), {})
    own = KernelId("6.1", "arm64")
    ev = landmark_events(LINES, tb, char_s, paced, own, (cal,))["bootm"].event
    wire = 100 * char_s
    line_t = 1.0 - (tb.host.low_s + tb.host.high_s) / 2
    assert ev.t_s == pytest.approx(line_t - 0.01 - shift * wire, abs=1e-5)
    extra = wire / 2 if paced is None else 0.0
    assert ev.own_s == pytest.approx(tb.host.uncertainty_s + 0.002 + extra, abs=1e-5)
    assert ev.source == "landmark" and ev.extra["landmark"] == "uboot_starting_kernel"
    # Only calibrated landmarks stand in.
    assert "kernel_init" not in landmark_events(LINES, tb, char_s, paced, own, (cal,))


def test_a_bootloader_that_never_handed_over_hides_nothing() -> None:
    uboot_only = [_line(0, "U-Boot 2023.01", 0), _line(1, "Starting kernel ...", 10)]
    vis = visibility(uboot_only, [])
    assert not vis.kernel_ran and vis.tags_hidden is None and vis.initramfs is None
    quiet = [*uboot_only, _line(2, "Starting application", 20)]
    vis = visibility(quiet, [])
    assert vis.kernel_ran and vis.tags_hidden and "quiet" in vis.tags_hidden
    shown = [*quiet, _line(3, "Linux version 6.1.0-56-arm64 (x)", 30, 0.0)]
    assert visibility(shown, []).tags_hidden is None


def test_a_root_mount_is_not_an_initramfs_boot() -> None:
    lines = [
        _line(0, "Trying to unpack rootfs image as initramfs...", 0, 0.1),
        _line(1, "Run /init as init process", 10, 0.2),
    ]
    assert visibility(lines, []).initramfs == "Trying to unpack rootfs image as initramfs..."
    mounted = [_line(2, "VFS: Mounted root (ext4 filesystem) readonly on device 254:0.", 5, 0.15)]
    assert visibility([*lines, *mounted], []).initramfs is None


def test_the_calibration_file_is_package_data() -> None:
    text = (REPO / "pyproject.toml").read_text()
    assert '"rig.analysis" = ["landmarks-linux-*.json"]' in text
    assert CALIBRATION.parent == Path(REPO / "rig" / "analysis")
    assert CALIBRATION.name == "landmarks-linux-6.1-arm64.json"
