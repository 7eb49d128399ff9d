"""The simulated CH340 relay: its frame parser, and the pty driven by real pyserial."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import serial

from simboard.client import SimProcess
from simboard.relay import RelayParser

BOARDS = Path(__file__).resolve().parents[1] / "config" / "boards"


def frame(channel: int, state: int) -> bytes:
    return bytes((0xA0, channel, state, (0xA0 + channel + state) & 0xFF))


# The parser alone.


def test_parser_split_frames_and_resync() -> None:
    p = RelayParser(4)
    assert p.feed(frame(1, 1)[:1]) == []
    assert p.feed(frame(1, 1)[1:3]) == []
    assert p.feed(frame(1, 1)[3:] + frame(2, 1)) == [(1, 1), (2, 1)]
    assert p.feed(b"\x00\x13garbage" + frame(3, 0)) == [(3, 0)]
    assert p.garbage == 9
    assert (p.frames, p.bad_frames) == (3, 0)


@pytest.mark.parametrize(
    "bad",
    [
        bytes((0xA0, 1, 1, 0x00)),  # checksum
        bytes((0xA0, 5, 1, 0xA6)),  # channel beyond the module's 4
        bytes((0xA0, 0, 1, 0xA1)),  # channel 0
        bytes((0xA0, 1, 2, 0xA3)),  # state neither 0 nor 1
    ],
)
def test_parser_ignores_and_counts_bad_frames(bad: bytes) -> None:
    p = RelayParser(4)
    assert p.feed(bad) == []
    assert p.bad_frames == 1
    assert p.feed(frame(2, 1)) == [(2, 1)]  # and finds the next good one


def test_parser_finds_a_frame_inside_a_bad_one() -> None:
    p = RelayParser(4)
    assert p.feed(b"\xa0\x01" + frame(1, 1)) == [(1, 1)]
    assert p.bad_frames == 1


# The live simulator through pyserial.


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcess]:
    with SimProcess(BOARDS / "fast.toml", seed=2) as s:
        yield s


@pytest.fixture(scope="module")
def relay(sim: SimProcess) -> Iterator[serial.Serial]:
    with serial.Serial(sim.relay, 9600, timeout=1, write_timeout=1) as port:
        yield port


def _send(port: serial.Serial, data: bytes) -> None:
    port.write(data)
    port.flush()


def _until(sim: SimProcess, pred: Callable[[dict[str, Any]], bool], timeout: float = 2.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        st = sim.control({"cmd": "status"})
        if pred(st) or time.monotonic() > deadline:
            return st
        time.sleep(0.005)


def test_power_on_and_off(sim: SimProcess, relay: serial.Serial) -> None:
    before = sim.control({"cmd": "status"})
    assert before["ok"] and before["relays"] == {"1": False, "2": False, "3": False, "4": False}
    _send(relay, frame(1, 1))
    st = _until(sim, lambda s: s["powered"])
    assert st["relays"]["1"] and st["powered"]
    assert st["boots"] == before["boots"] + 1
    assert st["frames"] == before["frames"] + 1
    assert relay.in_waiting == 0  # real modules never answer
    _send(relay, frame(1, 0))
    st = _until(sim, lambda s: not s["powered"])
    assert not st["relays"]["1"] and not st["powered"]


def test_two_frames_in_one_write(sim: SimProcess, relay: serial.Serial) -> None:
    n = sim.control({"cmd": "status"})["frames"]
    _send(relay, frame(2, 1) + frame(3, 1))
    st = _until(sim, lambda s: s["frames"] == n + 2)
    assert st["relays"]["2"] and st["relays"]["3"]
    assert not st["powered"]  # the board hangs on channel 1 only


def test_split_frame(sim: SimProcess, relay: serial.Serial) -> None:
    n = sim.control({"cmd": "status"})["frames"]
    _send(relay, frame(2, 0)[:2])
    time.sleep(0.03)
    assert sim.control({"cmd": "status"})["frames"] == n
    _send(relay, frame(2, 0)[2:])
    st = _until(sim, lambda s: s["frames"] == n + 1)
    assert not st["relays"]["2"]


def test_bad_checksum_is_ignored_and_counted(sim: SimProcess, relay: serial.Serial) -> None:
    st0 = sim.control({"cmd": "status"})
    _send(relay, bytes((0xA0, 4, 1, 0x00)))
    st = _until(sim, lambda s: s["bad_frames"] == st0["bad_frames"] + 1)
    assert st["bad_frames"] == st0["bad_frames"] + 1
    assert st["relays"] == st0["relays"]


def test_garbage_then_a_frame(sim: SimProcess, relay: serial.Serial) -> None:
    st0 = sim.control({"cmd": "status"})
    _send(relay, b"\x00\xff\x13\x37" + frame(4, 1))
    st = _until(sim, lambda s: s["relays"]["4"])
    assert st["relays"]["4"]
    assert st["garbage_bytes"] == st0["garbage_bytes"] + 4
    assert st["bad_frames"] == st0["bad_frames"]
