"""The bootmarkers decoder, run by the real sigrok-cli through `scan_markers`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from rig.artifacts.decode import find_decoders, scan_markers
from tests.captures import RATE, bounce_then_up, make_capture


def sigrok_lines(capture: Path, *opts: str) -> list[str]:
    """Annotation lines exactly as sigrok-cli prints them (the format the runner parses)."""
    env = {**os.environ, "SIGROKDECODE_DIR": str(find_decoders()[0])}
    pd = ":".join(["bootmarkers", *opts])
    cmd = ["sigrok-cli", "-i", str(capture), "-P", pd, "--protocol-decoder-samplenum"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout.splitlines()


def test_bounce_burst_then_power_up_and_markers(tmp_path: Path) -> None:
    power = bounce_then_up(10_000)  # pulses at 10000, 10300, 10600; stable from 10900
    cap = make_capture(
        tmp_path / "c.sr",
        60_000,
        {
            "power": power,
            "bootm": [20_000],
            "do_mount_root": [30_001],
            "kernel_init": [40_002],
            "ui_ready": [50_003],
        },
    )
    scan = scan_markers(cap)
    assert scan.power_up == (10_900,)
    assert scan.power_down == ()
    assert scan.bounces == 3
    assert scan.edges == {
        "bootm": (20_000,),
        "do_mount_root": (30_001,),
        "kernel_init": (40_002,),
        "ui_ready": (50_003,),
    }
    assert scan.channels == ("power", "bootm", "do_mount_root", "kernel_init", "ui_ready")
    assert (scan.samplerate, scan.samples, scan.engine) == (RATE, 60_000, "sigrok")


def test_annotation_texts(tmp_path: Path) -> None:
    cap = make_capture(
        tmp_path / "c.sr",
        20_000,
        {"power": [*bounce_then_up(2_000, pulses=2), 15_000], "bootm": [0, 8_000]},
    )
    # bootm starts high, so its toggle is a fall; 5400 us after power-up at 2600.
    assert sigrok_lines(cap, "power=power", "bootm=bootm") == [
        "2000-2500 bootmarkers-1: bounce 2",
        "2600-2600 bootmarkers-1: power-up",
        "8000-8000 bootmarkers-1: marker bootm fall",
        "2600-8000 bootmarkers-1: bootm fall at +0.005400 s",
        "15000-15000 bootmarkers-1: power-down",
    ]


def test_absent_markers_alias_and_extra_channels(tmp_path: Path) -> None:
    # uart_tx is busy but not a marker; init_post is the old name of kernel_init.
    cap = make_capture(
        tmp_path / "c.sr",
        30_000,
        {"uart_tx": list(range(0, 30_000, 7)), "power": [1_000], "init_post": [9_000, 9_500]},
    )
    scan = scan_markers(cap)
    assert scan.channels == ("uart_tx", "power", "init_post")
    assert scan.edges == {"kernel_init": (9_000, 9_500)}
    assert scan.power_up == (1_000,)


def test_power_down_with_bounce_and_second_boot(tmp_path: Path) -> None:
    power = [1_000, 20_000, 20_150, 20_300, 40_000]  # down at 20000 bounces back for 150 us
    cap = make_capture(tmp_path / "c.sr", 60_000, {"power": power, "bootm": [5_000, 45_000]})
    scan = scan_markers(cap)
    assert scan.power_up == (1_000, 40_000)
    assert scan.power_down == (20_300,)
    assert scan.bounces == 1
    assert scan.edges == {"bootm": (5_000, 45_000)}
    # One toggle per boot: no "toggled N times" warning.
    assert not [x for x in sigrok_lines(cap, "power=power", "bootm=bootm") if "warning" in x]


def test_warnings(tmp_path: Path) -> None:
    cap = make_capture(
        tmp_path / "c.sr", 30_000, {"power": [10_000], "bootm": [500, 12_000, 13_000]}
    )
    assert scan_markers(cap).edges == {"bootm": (500, 12_000, 13_000)}
    warnings = [x for x in sigrok_lines(cap, "power=power", "bootm=bootm") if "warning" in x]
    assert warnings == [
        "500-500 bootmarkers-1: warning: marker bootm before power-up",
        "13000-13000 bootmarkers-1: warning: marker bootm toggled 2 times this boot",
    ]


def test_marker_during_power_debounce_belongs_to_the_boot(tmp_path: Path) -> None:
    cap = make_capture(tmp_path / "c.sr", 10_000, {"power": [1_000], "ui_ready": [1_010]})
    lines = sigrok_lines(cap, "power=power", "ui_ready=ui_ready")
    assert "1000-1010 bootmarkers-1: ui_ready rise at +0.000010 s" in lines
    assert not [x for x in lines if "warning" in x]


@pytest.mark.parametrize(
    ("power", "bounces"),
    [([], 0), ([1_000, 1_200, 5_000, 5_999], 2)],  # never high; only pulses < debounce
)
def test_rail_never_comes_up(tmp_path: Path, power: list[int], bounces: int) -> None:
    cap = make_capture(tmp_path / "c.sr", 20_000, {"power": power, "bootm": [15_000]})
    scan = scan_markers(cap)
    assert (scan.power_up, scan.power_down, scan.bounces) == ((), (), bounces)
    assert scan.edges == {"bootm": (15_000,)}


def test_debounce_boundary_and_option(tmp_path: Path) -> None:
    # High for exactly 1000 samples (= 1000 us): accepted; 999: rejected.
    cap = make_capture(tmp_path / "c.sr", 20_000, {"power": [1_000, 1_999, 5_000, 6_000]})
    scan = scan_markers(cap)
    assert (scan.power_up, scan.power_down, scan.bounces) == ((5_000,), (6_000,), 1)
    # With a 500 us debounce both pulses count; a 2 ms one rejects both.
    assert scan_markers(cap, debounce_us=500).power_up == (1_000, 5_000)
    assert scan_markers(cap, debounce_us=2_000).bounces == 2


def test_rail_high_from_start_has_no_power_up(tmp_path: Path) -> None:
    cap = make_capture(tmp_path / "c.sr", 20_000, {"power": [0, 12_000]}, rate=2_000_000)
    scan = scan_markers(cap, debounce_us=1000)  # 2000 samples at 2 MHz
    assert (scan.power_up, scan.power_down, scan.samplerate) == ((), (12_000,), 2_000_000)
