"""The fast engine against the reference: `scan_markers` (the real sigrok-cli + bootmarkers).

Every fixture is decoded both ways and the results must be identical but for `engine`.
Small srzip members (CHUNK_BYTES patched) put edges and debounce windows across member
and read-block boundaries.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rig.artifacts import srzip
from rig.artifacts.decode import scan_markers
from rig.artifacts.edges import scan_edges
from rig.artifacts.fastscan import scan_capture, scan_markers_fast
from rig.errors import ArtifactError
from rig.model import MarkerScan
from tests.captures import bounce_then_up, make_capture


def same(cap: Path, debounce_us: float = 1000.0) -> MarkerScan:
    """Assert both engines agree on `cap`; returns the reference."""
    ref = scan_markers(cap, debounce_us)
    fast = scan_markers_fast(cap, debounce_us)
    assert fast.engine == "fast"
    assert dataclasses.replace(fast, engine="sigrok") == ref
    both = scan_capture(cap, debounce_us).markers
    assert dataclasses.replace(both, engine="sigrok") == ref
    return ref


MARKS = {
    "bootm": [20_000],
    "do_mount_root": [30_001],
    "kernel_init": [40_002],
    "ui_ready": [50_003],
}

FIXTURES: dict[str, tuple[int, dict[str, list[int]], float]] = {
    "bounce_then_markers": (60_000, {"power": bounce_then_up(10_000), **MARKS}, 1000.0),
    "absent_alias_extra": (
        30_000,
        {"uart_tx": list(range(1, 30_000, 7)), "power": [1_000], "init_post": [9_000, 9_500]},
        1000.0,
    ),
    "power_down_bounce_second_boot": (
        60_000,
        {"power": [1_000, 20_000, 20_150, 20_300, 40_000], "bootm": [5_000, 45_000]},
        1000.0,
    ),
    "warnings": (30_000, {"power": [10_000], "bootm": [500, 12_000, 13_000]}, 1000.0),
    "marker_in_debounce": (10_000, {"power": [1_000], "ui_ready": [1_010]}, 1000.0),
    "marker_in_rejected_pulse": (
        10_000,
        {"power": [1_000, 1_500, 3_000], "bootm": [1_200, 1_200 + 1], "ui_ready": [3_000]},
        1000.0,
    ),
    "rail_never_up": (20_000, {"power": [], "bootm": [15_000]}, 1000.0),
    "only_short_pulses": (
        20_000,
        {"power": [1_000, 1_200, 5_000, 5_999], "bootm": [15_000]},
        1000.0,
    ),
    "debounce_exact": (20_000, {"power": [1_000, 1_999, 5_000, 6_000]}, 1000.0),
    "debounce_exact_500": (20_000, {"power": [1_000, 1_999, 5_000, 6_000]}, 500.0),
    "debounce_2000": (20_000, {"power": [1_000, 1_999, 5_000, 6_000]}, 2000.0),
    "debounce_zero": (5_000, {"power": [10, 11, 13, 100, 102], "bootm": [11, 12]}, 0.0),
    "high_from_start": (20_000, {"power": [0, 12_000], "bootm": [0, 3_000]}, 1000.0),
    "edge_at_1_and_last": (3_000, {"power": [1, 2_999], "bootm": [1, 2_999]}, 1000.0),
    "pending_at_end": (3_000, {"power": [1_000, 1_100, 2_500], "bootm": [2_600]}, 1000.0),
    "burst_open_at_end": (3_000, {"power": [2_000, 2_100, 2_900]}, 1000.0),
    "simultaneous_edges": (
        10_000,
        {"power": [1_000, 6_000], "bootm": [1_000, 6_000], "kernel_init": [1_000, 2_000]},
        1000.0,
    ),
    "skip_and_edge_same_sample": (10_000, {"power": [1_000, 2_000], "bootm": [2_000]}, 1000.0),
    "toggle_many": (20_000, {"power": [100], "ui_ready": list(range(2_000, 2_600, 100))}, 1000.0),
    "markers_before_power": (
        20_000,
        {"bootm": [10, 20], "power": [5_000], "do_mount_root": [100, 6_000]},
        1000.0,
    ),
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_matches_sigrok(tmp_path: Path, name: str) -> None:
    n, toggles, debounce = FIXTURES[name]
    same(make_capture(tmp_path / "c.sr", n, toggles), debounce)


def test_reference_values(tmp_path: Path) -> None:
    """A known answer, so agreeing with a broken reference cannot pass unnoticed."""
    n, toggles, _ = FIXTURES["bounce_then_markers"]
    ref = same(make_capture(tmp_path / "c.sr", n, toggles))
    assert (ref.power_up, ref.bounces) == ((10_900,), 3)
    assert ref.edges["ui_ready"] == (50_003,)


@pytest.mark.parametrize("chunk", [1, 7, 1000, 1024, 4096])
def test_edges_and_debounce_across_member_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    # Edges exactly on member starts (multiples of 1024), one sample before and after,
    # and debounce windows that end in a later member.
    toggles = {
        "power": [1_024, 1_500, 2_048, 2_048 + 1_000, 8_191, 8_192 + 999],
        "bootm": [1_023, 2_049, 4_096],
        "ui_ready": [3_072, 8_192],
        "uart_tx": list(range(3, 10_000, 5)),
    }
    cap = make_capture(tmp_path / "c.sr", 12_288, toggles, chunk=chunk, monkeypatch=monkeypatch)
    assert len(srzip.read_info(cap).members) == -(-12_288 // chunk)
    same(cap)


@pytest.mark.parametrize("block", [1, 2, 3, 64, 1_000_000])
def test_transitions_do_not_depend_on_read_blocks(tmp_path: Path, block: int) -> None:
    toggles = {"power": [0, 5, 6, 64, 65, 999], "bootm": [1, 2, 3, 128], "x": [7, 8]}
    cap = make_capture(tmp_path / "c.sr", 1_000, toggles)
    e = scan_edges(cap, ["power", "bootm"], block=block)
    assert e.initial == {"power": 1, "bootm": 0}
    assert e.at["power"].tolist() == [5, 6, 64, 65, 999]
    assert e.at["bootm"].tolist() == [1, 2, 3, 128]


def test_engines_fail_alike_without_power(tmp_path: Path) -> None:
    cap = make_capture(tmp_path / "c.sr", 100, {"bootm": [5]})
    for scan in (scan_markers, scan_markers_fast):
        with pytest.raises(ArtifactError, match=r"c\.sr: no 'power' channel \(channels: bootm\)"):
            scan(cap)
    with pytest.raises(ValueError, match="debounce_us must be >= 0"):
        scan_markers_fast(cap, -1.0)


def test_scan_capture_without_console_channel(tmp_path: Path) -> None:
    cap = make_capture(tmp_path / "c.sr", 2_000, {"power": [100]})
    got = scan_capture(cap)
    assert (got.uart, got.uart_error, got.markers.power_up) == (None, None, (100,))


def test_scan_capture_keeps_markers_when_the_console_is_not_a_uart(tmp_path: Path) -> None:
    cap = make_capture(tmp_path / "c.sr", 2_000, {"power": [100], "uart_tx": list(range(1, 2_000))})
    got = scan_capture(cap)
    assert got.markers.power_up == (100,) and got.uart is None
    assert (
        got.uart_error is not None
        and "c.sr: channel 'uart_tx': no baud rate fits" in got.uart_error
    )
