"""The UART tap's corner cases against sigrok's `uart` decoder (bytes, ss, es, errors).

Frames at fractional bit widths, a line idle low at the start, glitches (frame errors
on the start bit), low stop bits and breaks, a start edge exactly where the previous
stop bit is sampled, captures that end inside a frame, tiny srzip members, and random
lines that are mostly UART-like with jitter and noise.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rig.artifacts import srzip
from rig.artifacts.srzip import write_sr
from rig.artifacts.uart import decode_uart
from rig.errors import ArtifactError
from tests.test_uart import assert_like_sigrok

FS = 1_000_000


def frame_levels(line: np.ndarray, start: float, byte: int, bw: float, stop: int = 1) -> float:
    """Draw one 8N1 frame on `line` from `start` (float samples); returns its end."""
    bits = [0, *((byte >> i) & 1 for i in range(8)), stop]
    for k, b in enumerate(bits):
        lo, hi = math.ceil(start + k * bw), math.ceil(start + (k + 1) * bw)
        line[lo:hi] = b
    return start + 10 * bw


def write(path: Path, line: np.ndarray, rate: int = FS, other: bool = True) -> Path:
    """The line on channel `uart_tx` (bit 1); a busy unrelated channel on bit 0."""
    busy = (np.arange(len(line)) // 3 & 1).astype(np.uint8) if other else 0
    write_sr(path, ["x", "uart_tx"], rate, [busy | (line.astype(np.uint8) << 1)])
    return path


@pytest.mark.parametrize("baud", [9600, 115200, 250000, 300000, 400000, 1_000_000])
def test_back_to_back_frames_at_fractional_bit_widths(tmp_path: Path, baud: int) -> None:
    bw = FS / baud
    line = np.ones(int(300 * 10 * bw) + 50, np.uint8)
    t = 7.3
    starts = []
    for i in range(256):
        starts.append(math.ceil(t))
        t = frame_levels(line, t, i, bw) + (i % 3) * 0.37 * bw  # back to back, or a bit later
    got = assert_like_sigrok(write(tmp_path / "c.sr", line), "uart_tx", baud)
    if bw >= 4:
        assert got.data == bytes(range(256)) and got.frame_errors == 0
        assert got.start.tolist() == starts  # the first low sample of each start bit


def test_line_low_at_start_then_console(tmp_path: Path) -> None:
    bw = FS / 115200
    line = np.zeros(4_000, np.uint8)
    line[500:] = 1  # the board powers up: TX goes idle high
    t = 800.0
    for b in b"U-Boot\r\n":
        t = frame_levels(line, t, b, bw)
    got = assert_like_sigrok(write(tmp_path / "c.sr", line), "uart_tx", 115200)
    assert got.data == b"U-Boot\r\n"


def test_glitches_low_stop_bits_break_and_start_on_the_stop_sample(tmp_path: Path) -> None:
    bw = 10.0
    line = np.ones(3_000, np.uint8)
    line[100:102] = 0  # a glitch: start bit sampled high
    t = frame_levels(line, 200.0, 0x41, bw, stop=0)  # low stop bit
    line[math.ceil(t) : math.ceil(t) + 10] = 1
    # The stop bit of this frame is sampled at ceil(500 + 4.5 + 90) = 595; a falling edge
    # right there is not a start bit for sigrok.
    frame_levels(line, 500.0, 0x7E, bw)
    line[595:700] = 0
    line[700:] = 1
    line[1_000:1_400] = 0  # a break (longer than a frame)
    t = frame_levels(line, 1_600.0, 0x42, bw)
    frame_levels(line, t + 1, 0x43, bw)
    got = assert_like_sigrok(write(tmp_path / "c.sr", line), "uart_tx", FS // 10)
    assert got.frame_errors >= 3


@pytest.mark.parametrize("cut", [0, 1, 4, 5, 6, 40, 84, 85, 86, 94, 95, 96, 97, 120])
def test_capture_ends_inside_a_frame(tmp_path: Path, cut: int) -> None:
    bw = 10.0  # samples: start 4.5 -> 5, data 15..85, stop 95
    line = np.ones(1_000 + cut, np.uint8)
    frame_levels(line, 500.0, 0x3C, bw)
    frame_levels(line, 1_000.0, 0x00, bw, stop=0)
    assert_like_sigrok(write(tmp_path / "c.sr", line), "uart_tx", FS // 10)


@pytest.mark.parametrize("chunk", [1, 13, 1024])
def test_tiny_members(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    bw = FS / 115200
    line = np.ones(3_000, np.uint8)
    t = 3.0
    for b in b"chunked\n":
        t = frame_levels(line, t, b, bw)
    monkeypatch.setattr(srzip, "CHUNK_BYTES", chunk)
    got = assert_like_sigrok(write(tmp_path / "c.sr", line), "uart_tx", 115200)
    assert got.data == b"chunked\n"


@pytest.mark.parametrize("seed", range(30))
def test_random_lines(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    baud = int(rng.choice([57600, 115200, 230400, 250000]))
    bw = FS / baud
    runs = []
    level = int(rng.integers(0, 2))
    for _ in range(int(rng.integers(50, 400))):
        kind = rng.random()
        if kind < 0.7:
            r = int(rng.integers(1, 10)) * bw + rng.normal(0, 0.3)
        elif kind < 0.85:
            r = rng.integers(1, 4)  # noise
        else:
            r = rng.integers(10, 40) * bw  # idle or break
        runs.append(max(1, round(r)))
    line = np.repeat((np.arange(len(runs)) + level) & 1, runs).astype(np.uint8)
    assert_like_sigrok(write(tmp_path / "c.sr", line, other=seed % 2 == 0), "uart_tx", baud)


@pytest.mark.parametrize("text", [b"U", b"\x00", b"ok\r\n", b"login: ", b"=> boot\r\n"])
@pytest.mark.parametrize("baud", [9600, 115200, 230400])
def test_baud_of_a_few_bytes_is_right_or_refused(tmp_path: Path, text: bytes, baud: int) -> None:
    bw = FS / baud
    line = np.zeros(int(20 * bw * (len(text) + 2)), np.uint8)
    line[5:] = 1
    t = 3 * bw
    for b in text:
        t = frame_levels(line, t, b, bw) + bw
    cap = write(tmp_path / "c.sr", line)
    assert_like_sigrok(cap, "uart_tx", baud)
    if len(text) < 3:  # a byte or two fit too many rates
        with pytest.raises(ArtifactError, match=r"c\.sr: channel 'uart_tx': no baud rate fits"):
            decode_uart(cap, "uart_tx")
    else:
        got = decode_uart(cap, "uart_tx")
        assert (got.data, got.baud, got.baud_detected) == (text, baud, True)


def test_idle_line_has_no_console(tmp_path: Path) -> None:
    line = np.zeros(10_000, np.uint8)
    line[4_000:] = 1  # powered, never talks
    got = decode_uart(write(tmp_path / "c.sr", line), "uart_tx")
    assert (got.data, got.baud, got.baud_detected, got.frame_errors) == (b"", None, False, 0)
