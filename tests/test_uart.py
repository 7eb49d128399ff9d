"""The UART tap against sigrok's own `uart` decoder, on every shared real capture.

sigrok-dumps (tests/data/sigrok-dumps, or $SIGROK_DUMPS): the 8N1 "Hello World!"
captures at 1200..921600 baud and the TrekStor eBook reader's bootloader console
(channel `TX`, 115200 baud, a burst of noise before the console starts).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rig.artifacts.uart import decode_uart
from rig.artifacts.uartbin import read_uart_bin, write_uart_bin
from rig.errors import ArtifactError
from rig.model.uart import UartBytes

DUMPS = Path(
    os.environ.get("SIGROK_DUMPS", Path(__file__).resolve().parent / "data" / "sigrok-dumps")
)
UART = DUMPS / "uart"
HELLO = sorted((UART / "hello_world" / "8n1").glob("*.sr"))
TREKSTOR = UART / "trekstor_ebr30_a" / "trekstor_ebr30_a_uart.sr"
CAPTURES = [(p, int(p.stem.rsplit("_", 1)[1])) for p in HELLO] + [(TREKSTOR, 115200)]
_LINE = re.compile(r"^(\d+)-(\d+) uart-1: (.*)$")


def sigrok_uart(capture: Path, channel: str, baud: int) -> tuple[list[tuple[int, int, int]], int]:
    """sigrok's rx-data (ss, es, byte) and its count of frame errors."""
    cmd = ["sigrok-cli", "-i", str(capture), "-P", f"uart:baudrate={baud}:rx={channel}"]
    cmd += ["-A", "uart=rx-data:rx-warnings", "--protocol-decoder-samplenum"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300)
    assert proc.stderr == "", proc.stderr
    data, errors = [], 0
    for line in proc.stdout.splitlines():
        m = _LINE.match(line)
        assert m, line
        if m.group(3) == "Frame error":
            errors += 1
        else:
            data.append((int(m.group(1)), int(m.group(2)), int(m.group(3), 16)))
    return data, errors


def as_rows(u: UartBytes) -> list[tuple[int, int, int]]:
    return list(zip(u.ss.tolist(), u.es.tolist(), u.data, strict=True))


def assert_like_sigrok(capture: Path, channel: str, baud: int) -> UartBytes:
    ref, errors = sigrok_uart(capture, channel, baud)
    got = decode_uart(capture, channel, baud)
    assert as_rows(got) == ref
    assert got.frame_errors == errors
    assert (got.baud, got.baud_detected) == (baud, False)
    return got


def test_the_shared_captures_are_there() -> None:
    assert len(HELLO) == 11 and TREKSTOR.exists(), f"sigrok-dumps not found at {DUMPS}"


@pytest.mark.parametrize(("capture", "baud"), CAPTURES, ids=lambda x: getattr(x, "stem", x))
def test_bytes_and_samples_match_sigrok(capture: Path, baud: int) -> None:
    got = assert_like_sigrok(capture, "TX", baud)
    if capture in HELLO:
        text = got.data.decode()
        assert "Hello World!\r\n" in text and set(text) <= set("Hello World!\r\n")


@pytest.mark.parametrize(("capture", "baud"), CAPTURES, ids=lambda x: getattr(x, "stem", x))
def test_baud_is_detected(capture: Path, baud: int) -> None:
    got = decode_uart(capture, "TX")
    assert (got.baud, got.baud_detected) == (baud, True)
    assert as_rows(got) == as_rows(decode_uart(capture, "TX", baud))


def test_trekstor_noise_is_frame_errors_then_the_bootloader_talks() -> None:
    got = decode_uart(TREKSTOR, "TX")
    assert got.frame_errors > 1000  # the 2-3 sample pulses before the console
    assert len(got.data) == 1109
    assert np.all(np.diff(got.ss) > 0) and np.all(got.es > got.ss)


def test_uart_bin_round_trip(tmp_path: Path) -> None:
    got = decode_uart(TREKSTOR, "TX")
    path = tmp_path / "uart.bin"
    write_uart_bin(path, got)
    back = read_uart_bin(path)
    assert as_rows(back) == as_rows(got)
    assert (back.channel, back.samplerate, back.baud, back.baud_detected, back.frame_errors) == (
        "TX",
        1_000_000,
        115200,
        True,
        got.frame_errors,
    )
    raw = path.read_bytes()
    header, _, body = raw.partition(b"\n")
    assert b'"schema": "bootrig.uart/1"' in header
    assert body[: len(got.data)] == got.data  # the console text right after the header
    assert len(raw) == len(header) + 1 + 25 * len(got.data)
    assert back.start.tolist() == got.start.tolist()
    assert not list(tmp_path.glob("*.part"))


def test_uart_bin_empty_and_damaged(tmp_path: Path) -> None:
    path = tmp_path / "uart.bin"
    write_uart_bin(path, UartBytes("uart_tx", 24_000_000, None, False))
    empty = read_uart_bin(path)
    assert (empty.data, empty.baud, len(empty.ss)) == (b"", None, 0)
    path.write_bytes(path.read_bytes() + b"x")
    with pytest.raises(ArtifactError, match=r"uart\.bin: header says 0 bytes, body has 1 bytes"):
        read_uart_bin(path)
    path.write_bytes(b"not json\n")
    with pytest.raises(ArtifactError, match=r"uart\.bin: not a bootrig.uart/1 file"):
        read_uart_bin(path)


def test_errors_name_the_capture(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match=r"trekstor_ebr30_a_uart\.sr: no channel 'uart_tx'"):
        decode_uart(TREKSTOR)
    with pytest.raises(ArtifactError, match="baud must be positive"):
        decode_uart(TREKSTOR, "TX", 0)
