"""The simulated analyzer's samples, decoded by the real sigrok-cli, against the truth.

These run the board model offline (relay frames at chosen host times), so they are
exact and fast; tests/test_sim_e2e.py does the same through the live simulator.
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rig.artifacts.srzip import write_sr
from simboard import truth
from simboard.board import Board
from simboard.capture import Arming, blocks, first_sample, render, sample_count
from simboard.timeline import load
from simboard.usbserial import Transfer

BOARDS = Path(__file__).resolve().parents[1] / "config" / "boards"
WIRING = {"power": 0, "bootm": 1, "do_mount_root": 2, "kernel_init": 3, "ui_ready": 4, "uart_tx": 5}
T0 = 10**12  # host ns of arming, arbitrary
FS = 1_000_000


def _board(name: str = "fast.toml", seed: int = 3) -> tuple[Board, list[list[Transfer]]]:
    plans: list[list[Transfer]] = []
    board = Board(load(BOARDS / name), seed, False, lambda _k, p: plans.append(p), start_ns=T0)
    return board, plans


def _samples(board: Board, arming: Arming, stop_ns: int, block: int = 1 << 22) -> np.ndarray:
    n = sample_count(arming, stop_ns)
    return np.concatenate(list(blocks(board.snapshot(arming.armed_ns), arming, n, block)))


def _first_high(samples: np.ndarray, bit: int) -> int:
    return int(np.argmax(samples & (1 << bit) != 0))


def _decode_uart(
    tmp_path: Path, samples: np.ndarray, wiring: dict[str, int]
) -> list[tuple[int, int]]:
    sr = tmp_path / "x.sr"
    names = [
        next((k for k, v in wiring.items() if v == i), str(i))
        for i in range(max(wiring.values()) + 1)
    ]
    write_sr(sr, names, FS, [samples])
    out = subprocess.run(
        [
            "sigrok-cli",
            *("-i", str(sr)),
            *("-P", "uart:baudrate=115200:rx=uart_tx"),
            *("-A", "uart=rx-data", "--protocol-decoder-samplenum"),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    # "19725-19795 uart-1: 0D"
    return [(int(ln.split("-", 1)[0]), int(ln.split()[-1], 16)) for ln in out.splitlines()]


def test_uart_tx_decodes_to_the_console_bytes(tmp_path: Path) -> None:
    board, _ = _board()
    board.frame(1, 1, T0 + 20_000_000)
    arming = Arming(T0, FS, WIRING)
    stop = T0 + 450_000_000
    samples = _samples(board, arming, stop)
    decoded = _decode_uart(tmp_path, samples, WIRING)
    boot = board.boots[0]
    assert bytes(b for _, b in decoded) == boot.timeline.data
    # Each line's first start bit is where the truth says: the falling edge is in the
    # first sample at or after it, and the decoder's rx-data span starts one bit later.
    doc = truth.truth(board.profile, "fast", 3, board.boots, arming, stop)
    starts = [s for s, _ in decoded]
    bit = FS / 115200
    for ln in doc["boots"][0]["lines"]:
        edge = math.ceil((boot.power_edge_ns - T0 + ln["t_s"] * 1e9) * FS / 1e9)
        assert abs(starts[ln["bytes"]] - edge - bit) < 1.0, ln["text"]


def test_markers_and_power_edge_land_on_the_expected_samples() -> None:
    board, _ = _board()
    board.frame(1, 1, T0 + 20_000_000)
    arming = Arming(T0, FS, WIRING)
    stop = T0 + 450_000_000
    samples = _samples(board, arming, stop)
    doc = truth.truth(board.profile, "fast", 3, board.boots, arming, stop)["boots"][0]
    edge = doc["power_edge_ns"]
    for name, t_s in doc["markers"].items():
        want = int(first_sample(edge - T0 + t_s * 1e9, FS))
        assert _first_high(samples, WIRING[name]) == want, name
    power = samples & 1
    contact = int(first_sample(board.boots[0].contact_ns - T0, FS))
    assert not power[:contact].any()
    assert doc["power_edge_sample"] == int(first_sample(edge - T0, FS))
    assert power[doc["power_edge_sample"] :].all()  # high from the true edge on
    assert doc["completed"] is True
    assert [s["name"] for s in doc["stages"]][-1] == "application"


def test_bounce_gaps_stay_under_a_millisecond() -> None:
    for seed in range(20):
        board, _ = _board(seed=seed)
        board.frame(1, 1, T0)
        bounce = board.boots[0].bounce_ns
        assert len(bounce) % 2 == 1  # ends on a rise
        assert 300_000 <= bounce[-1] <= 800_000 or len(bounce) == 1
        assert np.diff(bounce).max(initial=0) < 1_000_000


def test_power_off_drops_every_line_and_cuts_the_boot() -> None:
    board, plans = _board()
    board.frame(1, 1, T0 + 1_000_000)
    board.frame(1, 0, T0 + 150_000_000)  # mid-kernel
    arming = Arming(T0, FS, WIRING)
    stop = T0 + 400_000_000
    samples = _samples(board, arming, stop)
    boot = board.boots[0]
    drop = int(first_sample(boot.drop_ns - T0, FS))
    assert samples[drop - 1] & 1 and not samples[drop:].any()
    doc = truth.truth(board.profile, "fast", 3, board.boots, arming, stop)["boots"][0]
    assert doc["completed"] is False
    assert set(doc["markers"]) == {"bootm"}
    cut_s = (boot.drop_ns - boot.power_edge_ns) / 1e9
    assert all(ln["t_s"] < cut_s for ln in doc["lines"])
    # the console was re-planned: only bytes fully sent before the drop reach the host
    sent = b"".join(d for _, d in plans[-1])
    assert sent == boot.timeline.data[: doc["console"]["bytes"]]
    assert len(sent) < len(boot.timeline.data)


def test_unwired_signals_are_not_captured_and_blocks_do_not_matter() -> None:
    board, _ = _board()
    board.frame(1, 1, T0 + 1_000_000)
    wiring = {"power": 7, "bootm": 0, "ui_ready": 2, "uart_tx": 3}  # no kernel_init
    arming = Arming(T0, FS, wiring)
    stop = T0 + 350_000_000
    one = _samples(board, arming, stop)
    small = _samples(board, arming, stop, block=4097)
    assert np.array_equal(one, small)
    assert not (one & 0b0111_0010).any()  # channels 1, 4, 5, 6 carry nothing
    assert one[-1] == 0b1000_1101


def test_arming_while_powered_starts_with_the_current_levels() -> None:
    board, _ = _board()
    board.frame(1, 1, T0 - 200_000_000)  # booted before sampling began
    arming = Arming(T0, FS, WIRING)
    stop = T0 + 250_000_000
    samples = _samples(board, arming, stop)
    assert samples[0] & 0b0010_0011 == 0b0010_0011  # power, bootm, uart idle high
    doc = truth.truth(board.profile, "fast", 3, board.boots, arming, stop)
    assert doc["boots"] == []  # its power-on was not in the window


def test_a_long_render_has_every_sample(tmp_path: Path) -> None:
    # How fast it renders is bench/analysis_throughput.py's (sim_render_msps), not a test's.
    board, _ = _board("ecovec-baseline.toml")
    board.frame(1, 1, T0 + 5_000_000)
    arming = Arming(T0, FS, WIRING)
    n = render(tmp_path / "c.bin", board.snapshot(T0), arming, T0 + 20_000_000_000)
    assert n == 20_000_001 == (tmp_path / "c.bin").stat().st_size


@pytest.mark.parametrize("fs", [1_000_000, 24_000_000])
def test_sample_times(fs: int) -> None:
    arming = Arming(T0, fs, WIRING)
    assert sample_count(arming, T0) == 1
    assert sample_count(arming, T0 + 1_000_000_000) == fs + 1
    assert int(first_sample(1000.0, fs)) == 1000 * fs // 10**9
