"""Console pacing through real pyserial: baud rate, USB-serial chunks, latency, drops."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import serial

from simboard.client import SimControl, SimProcess
from simboard.timeline import Timeline, load, plan

BOARDS = Path(__file__).resolve().parents[1] / "config" / "boards"
FAST = (BOARDS / "fast.toml").read_text()
BAUD = 115200
BYTE_S = 10 / BAUD
ON = bytes((0xA0, 1, 1, 0xA2))


def _profile(tmp: Path, name: str, burst_lines: int, extra: dict[str, str]) -> Path:
    """fast.toml with a contiguous printk burst in the kernel stage."""
    text = FAST
    burst = ",\n".join(f'      "burst {i:04d} ' + "x" * 80 + '"' for i in range(burst_lines))
    text = text.replace(
        "  { initcalls = [", "  { printk = [\n" + burst + "\n  ] },\n  { initcalls = [", 1
    )
    for old, new in extra.items():
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp / name
    path.write_text(text)
    return path


def _read_boot(sim: SimProcess, want: int, timeout: float) -> tuple[list[tuple[int, bytes]], dict]:
    """Power on, read until `want` bytes arrived; returns the reads and the boot's truth."""
    with (
        serial.Serial(sim.console, BAUD, timeout=0.2) as con,
        serial.Serial(sim.relay, 9600, timeout=1) as relay,
    ):
        ctl = SimControl(sim.control_path)
        ctl.arm({"power": 0})
        relay.write(ON)
        relay.flush()
        reads: list[tuple[int, bytes]] = []
        got = 0
        deadline = time.monotonic() + timeout
        while got < want and time.monotonic() < deadline:
            data = con.read(con.in_waiting or 1)
            if data:
                reads.append((time.monotonic_ns(), data))
                got += len(data)
        truth = Path(sim.info["control"]).with_name("truth.json")
        ctl.stop(truth=truth)
        doc = json.loads(truth.read_text())
    return reads, doc["boots"][0]


@pytest.fixture(scope="module")
def burst(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Timeline, list, dict]]:
    path = _profile(
        tmp_path_factory.mktemp("burst"),
        "burst.toml",
        48,
        {"duration_s = 0.12": "duration_s = 0.56"},
    )
    tl = plan(load(path), seed=8, boot=0)
    with SimProcess(path, seed=8) as sim:
        reads, boot = _read_boot(sim, len(tl.data), timeout=3.0)
        status = sim.control({"cmd": "status"})
    assert status["console_dropped"] == 0
    yield tl, reads, boot


def _arrival_s(
    tl: Timeline, boot: dict, reads: list[tuple[int, bytes]]
) -> tuple[np.ndarray, np.ndarray]:
    """Per read: host time (s after the power edge) and the byte offset of its last byte."""
    t = np.array([(t_ns - boot["power_edge_ns"]) / 1e9 for t_ns, _ in reads])
    last = np.cumsum([len(d) for _, d in reads]) - 1
    return t, last


def test_bytes_arrive_complete_and_in_order(burst: tuple[Timeline, list, dict]) -> None:
    tl, reads, _ = burst
    assert b"".join(d for _, d in reads) == tl.data


def test_a_long_burst_arrives_at_the_baud_rate(burst: tuple[Timeline, list, dict]) -> None:
    tl, reads, boot = burst
    t, last = _arrival_s(tl, boot, reads)
    first = next(ln for ln in tl.lines if "burst 0000" in ln.text)
    final = next(ln for ln in tl.lines if "burst 0047" in ln.text)
    inside = (last >= first.offset + 200) & (last <= final.offset)
    assert inside.sum() > 100
    rate = np.polyfit(t[inside], last[inside], 1)[0]  # bytes per second
    assert rate == pytest.approx(BAUD / 10, rel=0.02)


def test_chunks_are_never_early_and_at_most_a_buffer(burst: tuple[Timeline, list, dict]) -> None:
    tl, reads, boot = burst
    t, last = _arrival_s(tl, boot, reads)
    stop_bit_done = tl.byte_t[last] + BYTE_S
    assert (t >= stop_bit_done).all()  # the adapter cannot deliver a byte before it is in
    sizes = np.array([len(d) for _, d in reads])
    # A read merges transfers only if the reader was late; allow a few such hiccups.
    assert np.mean(sizes <= 62) >= 0.95
    firsts = last - sizes + 1
    lateness = t - (tl.byte_t[firsts] + BYTE_S)
    assert np.median(lateness) <= 0.001 + 0.0005  # latency timer 1 ms


def test_first_byte_latency(burst: tuple[Timeline, list, dict]) -> None:
    tl, reads, boot = burst
    first = boot["lines"][0]
    assert first["t_s"] == pytest.approx(tl.byte_t[0])
    # The adapter model's promise: the first byte is due one character time after it
    # left the board, plus at most the 1 ms latency timer...
    due = (first["due_ns"] - boot["power_edge_ns"]) / 1e9 - tl.byte_t[0]
    assert BYTE_S - 1e-6 <= due <= BYTE_S + 0.001 + 1e-6
    # ...and the host did the rest in order: written no sooner than due, read after that
    # (how much later is the host's doing, recorded, not a property of the model).
    assert first["due_ns"] <= first["written_ns"] <= reads[0][0]


def test_nobody_reading_drops_bytes_without_blocking(tmp_path: Path) -> None:
    # 120 kB at 4 Mbaud: more than a pty buffers when nobody reads it.
    path = _profile(
        tmp_path,
        "flood.toml",
        1300,
        {
            "baud = 115200": "baud = 4000000",
            "usb_buffer_bytes = 62": "usb_buffer_bytes = 4096",
            "duration_s = 0.12": "duration_s = 0.5",
        },
    )
    total = len(plan(load(path), seed=1, boot=0).data)
    with SimProcess(path, seed=1) as sim, serial.Serial(sim.relay, 9600, timeout=1) as relay:
        relay.write(ON)
        relay.flush()
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            t = time.monotonic()
            st = sim.control({"cmd": "status"})
            # Responsive: a simulator blocked on the full pty would answer only once
            # somebody read it, never; 2 s leaves a loaded host its scheduling.
            assert time.monotonic() - t < 2.0
            if st["console_sent"] + st["console_dropped"] == total:
                break
            time.sleep(0.02)
    assert st["console_sent"] + st["console_dropped"] == total
    assert st["console_dropped"] > 0
