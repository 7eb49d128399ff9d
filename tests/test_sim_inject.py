"""Faults a bench injects at a moment it chooses (`inject` on the control socket): the
relay module dropping off the USB bus after power-on, and an analyzer slow to start."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import serial

from simboard.client import SimControl, SimProcess

FAST = Path(__file__).resolve().parents[1] / "config" / "boards" / "fast.toml"
ON = bytes((0xA0, 1, 1, 0xA2))
OFF = bytes((0xA0, 1, 0, 0xA1))


def test_relay_lost_after_power_on_leaves_the_board_running(tmp_path: Path) -> None:
    with (
        SimProcess(FAST, seed=3) as sim,
        serial.Serial(sim.relay, 9600, write_timeout=1) as relay,
        serial.Serial(sim.console, 115200, timeout=0.1) as con,
    ):
        ctl = SimControl(sim.control_path)
        ctl.arm({"power": 0, "uart_tx": 1})
        relay.write(ON)
        relay.flush()
        time.sleep(0.05)
        assert ctl.call({"cmd": "inject", "fault": "relay-lost"})["relay"] == sim.relay
        status = ctl.status()
        assert status["relay_lost"] and status["powered"]  # the contacts held
        with pytest.raises(serial.SerialException):  # the port is gone: EIO
            relay.write(OFF)
            relay.flush()
        got = b""
        deadline = time.monotonic() + 0.6
        while time.monotonic() < deadline:
            got += con.read(con.in_waiting or 1)
        ctl.stop(truth=tmp_path / "t.json")
        assert ctl.status()["powered"]  # the off frame never reached the board
    (boot,) = json.loads((tmp_path / "t.json").read_text())["boots"]
    assert boot["completed"] and b"bootrig: marker ui_ready" in got


def test_a_slow_analyzer_start_delays_the_next_arm_only() -> None:
    with SimProcess(FAST, seed=3) as sim:
        ctl = SimControl(sim.control_path)
        resp = ctl.call({"cmd": "inject", "fault": "analyzer-slow", "delay_s": 0.4})
        assert resp["delay_s"] == 0.4 and ctl.status()["arm_delay_s"] == 0.4
        t0 = time.monotonic_ns()
        armed = ctl.arm({"power": 0})
        assert time.monotonic_ns() - t0 >= 0.4e9
        assert armed - t0 >= 0.4e9  # sampling starts when the analyzer is up, not asked
        assert ctl.status()["arm_delay_s"] == 0
        t1 = time.monotonic_ns()
        ctl.arm({"power": 0})
        assert time.monotonic_ns() - t1 < 0.3e9


@pytest.mark.parametrize(
    ("req", "error"),
    [
        ({"fault": "melt"}, "inject: fault: expected one of relay-lost, analyzer-slow"),
        ({"fault": "analyzer-slow"}, "inject: delay_s: expected seconds in (0, 30]"),
        ({"fault": "analyzer-slow", "delay_s": 31}, "found 31"),
        ({"fault": "analyzer-slow", "delay_s": True}, "found True"),
    ],
)
def test_bad_injections_are_refused(req: dict[str, object], error: str) -> None:
    with SimProcess(FAST, seed=3) as sim:
        resp = sim.control({"cmd": "inject", **req})
    assert not resp["ok"] and error in resp["error"]
