"""Simulated boots (simboard renders the analyzer's samples), both engines and the UART tap
against sigrok-cli: single boots at several sample rates, power cycles that cut a boot
and its console mid-byte, faults, and a board already running when sampling begins."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.artifacts.fastscan import scan_capture
from rig.artifacts.srzip import write_sr
from simboard.board import Board
from simboard.capture import Arming, blocks, first_sample, sample_count
from simboard.timeline import Fault, load
from tests.test_fastscan import same
from tests.test_uart import as_rows, assert_like_sigrok

BOARDS = Path(__file__).resolve().parents[1] / "config" / "boards"
WIRING = {"power": 0, "bootm": 1, "do_mount_root": 2, "kernel_init": 3, "ui_ready": 4, "uart_tx": 5}
T0 = 10**12
MS = 1_000_000


def render(
    path: Path,
    rate: int,
    frames: list[tuple[int, int]],
    stop_ms: int,
    seed: int = 3,
    fault: str | None = None,
    armed_ms: int = 0,
) -> tuple[Path, Board]:
    """Relay frames (state, ms after T0) on the fast board; capture armed at armed_ms."""
    board = Board(
        load(BOARDS / "fast.toml"),
        seed,
        False,
        lambda _k, _p: None,
        start_ns=T0 - 10**9,
        fault=Fault.parse(fault) if fault else None,
    )
    for state, at_ms in frames:
        board.frame(1, state, T0 + at_ms * MS)
    arming = Arming(T0 + armed_ms * MS, rate, WIRING)
    n = sample_count(arming, T0 + stop_ms * MS)
    names = [*WIRING, "D6", "D7"]
    write_sr(path, names, rate, blocks(board.snapshot(arming.armed_ns), arming, n))
    return path, board


def check(cap: Path) -> None:
    same(cap)
    uart = assert_like_sigrok(cap, "uart_tx", 115200)
    got = scan_capture(cap)
    assert got.uart is not None and got.uart_error is None
    assert as_rows(got.uart) == as_rows(uart)
    assert (got.uart.baud, got.uart.baud_detected) == (115200, True)


@pytest.mark.parametrize("rate", [1_000_000, 3_000_000, 24_000_000])
def test_one_boot(tmp_path: Path, rate: int) -> None:
    cap, board = render(tmp_path / "c.sr", rate, [(1, 20)], 420)
    check(cap)
    got = scan_capture(cap)
    boot = board.boots[0]
    assert got.uart is not None and got.uart.data == boot.timeline.data
    # Each byte starts on the first sample at or after its true start bit (the truth).
    true_ns = float(boot.power_edge_ns - T0) + boot.timeline.byte_t * 1e9
    assert got.uart.start.tolist() == first_sample(true_ns, rate).tolist()
    assert len(got.markers.power_up) == 1


@pytest.mark.parametrize("seed", range(4))
def test_power_cycles_cut_the_console(tmp_path: Path, seed: int) -> None:
    frames = [(1, 5), (0, 60 + 37 * seed), (1, 200), (0, 330), (1, 331)]
    cap, _ = render(tmp_path / "c.sr", 2_000_000, frames, 520, seed=seed)
    check(cap)
    assert len(scan_capture(cap).markers.power_down) >= 1


@pytest.mark.parametrize(
    "fault", ["garbage", "garbage:3", "panic:kernel", "hang:init", "missing-marker:kernel_init"]
)
def test_faults(tmp_path: Path, fault: str) -> None:
    cap, _ = render(tmp_path / "c.sr", 1_000_000, [(1, 10)], 400, fault=fault)
    check(cap)


def test_armed_while_running(tmp_path: Path) -> None:
    cap, _ = render(tmp_path / "c.sr", 1_000_000, [(1, 0)], 400, armed_ms=60)
    same(cap)
    assert_like_sigrok(cap, "uart_tx", 115200)
