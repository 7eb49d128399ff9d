"""The simulator as the rig drives it: ready line, relay, console, arm/stop, truth.

Real pyserial on the ptys and the real sigrok-cli on the capture; the simulator is the
only test double, and every SimProcess is closed even when a test fails.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import serial

from rig.artifacts.srzip import convert_binary
from rig.errors import InstrumentError
from rig.names import CHANNELS, TRUTH_SCHEMA
from simboard.client import SimControl, SimProcess
from simboard.timeline import load, plan

BOARDS = Path(__file__).resolve().parents[1] / "config" / "boards"
FAST = BOARDS / "fast.toml"
WIRING = {name: i for i, name in enumerate(CHANNELS)}
SEED = 9


def frame(channel: int, state: int) -> bytes:
    return bytes((0xA0, channel, state, (0xA0 + channel + state) & 0xFF))


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcess]:
    with SimProcess(FAST, seed=SEED) as s:
        yield s


@pytest.fixture(scope="module")
def run(sim: SimProcess, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One measured boot, the way the rig does it."""
    out = tmp_path_factory.mktemp("run")
    ctl = SimControl(sim.control_path)
    with (
        serial.Serial(sim.relay, 9600, timeout=1) as relay,
        serial.Serial(sim.console, 115200, timeout=0.05) as con,
    ):
        armed_ns = ctl.arm(WIRING)
        t_cmd = time.monotonic_ns()
        relay.write(frame(1, 1))
        relay.flush()
        received = b""
        first_byte_ns = None
        deadline = time.monotonic() + 10.0
        while b"bootrig: marker ui_ready\r\n" not in received and time.monotonic() < deadline:
            received += con.read(con.in_waiting or 1)
            if received and first_byte_ns is None:
                first_byte_ns = time.monotonic_ns()
        time.sleep(0.01)
        stop = ctl.stop(out / "capture.bin", out / "truth.json")
        relay.write(frame(1, 0))
        relay.flush()
    return {
        "out": out,
        "armed_ns": armed_ns,
        "t_cmd": t_cmd,
        "first_byte_ns": first_byte_ns,
        "received": received,
        "stop": stop,
        "truth": json.loads((out / "truth.json").read_text()),
    }


def test_ready_line(sim: SimProcess) -> None:
    info = sim.info
    assert set(info) >= {"relay", "console", "control", "pid", "profile", "board", "variant"}
    assert info["pid"] == sim.pid
    assert (info["board"], info["variant"], info["seed"]) == ("fastboard", "test", SEED)
    assert os.path.exists(info["relay"]) and os.path.exists(info["console"])


def test_console_and_truth_match_the_seeded_plan(run: dict[str, Any]) -> None:
    tl = plan(load(FAST), seed=SEED, boot=0)
    assert run["received"] == tl.data
    doc = run["truth"]
    assert doc["schema"] == TRUTH_SCHEMA
    assert (doc["board"], doc["variant"], doc["seed"]) == ("fastboard", "test", SEED)
    assert doc["armed_ns"] == run["armed_ns"]
    (boot,) = doc["boots"]
    assert boot["boot_index"] == 0 and boot["completed"]
    assert [s["duration_s"] for s in boot["stages"]] == pytest.approx(
        [s.duration_s for s in tl.stages]
    )
    assert boot["markers"] == pytest.approx(tl.markers)
    assert [ln["text"] for ln in boot["lines"]] == [ln.text for ln in tl.lines]
    console = dict(boot["console"])
    assert console.pop("write_late_max_us") >= 0  # the simulator's own lateness
    assert console == {
        "baud": 115200,
        "usb_latency_ms": 1.0,
        "usb_buffer_bytes": 62,
        "bytes": len(tl.data),
    }
    assert all(ln["written_ns"] >= ln["due_ns"] for ln in boot["lines"])
    assert boot["kernel_clock"]["drift_ppm"] == 40.0


def test_power_edge_follows_the_relay_frame(run: dict[str, Any]) -> None:
    (boot,) = run["truth"]["boots"]
    # Between the frame and the board's first console byte (it speaks only when powered):
    # events, not a guess at how soon a loaded host lets the simulator act on the frame.
    assert run["t_cmd"] < boot["relay_on_ns"] < run["first_byte_ns"]
    delay = boot["power_edge_ns"] - boot["relay_on_ns"]
    assert 5.3e6 - 1 <= delay <= 5.8e6 + 1  # 5 ms actuation + a 0.3..0.8 ms bounce
    assert boot["bounce_s"][-1] == 0.0 and len(boot["bounce_s"]) % 2 == 1


def test_capture_has_markers_and_uart_where_the_truth_says(run: dict[str, Any]) -> None:
    stop, doc = run["stop"], run["truth"]
    raw = np.fromfile(run["out"] / "capture.bin", dtype=np.uint8)
    assert (
        len(raw) == stop["samples"] == (stop["stopped_ns"] - run["armed_ns"]) * 10**6 // 10**9 + 1
    )
    (boot,) = doc["boots"]
    edge = boot["power_edge_ns"] - run["armed_ns"]
    for name, t_s in boot["markers"].items():
        want = math.ceil((edge + t_s * 1e9) / 1000)
        assert int(np.argmax(raw & (1 << WIRING[name]) != 0)) == want, name
    assert raw[boot["power_edge_sample"] :].min() & 1 == 1

    sr = run["out"] / "capture.sr"
    convert_binary(run["out"] / "capture.bin", sr, list(CHANNELS), 1_000_000)
    out = subprocess.run(
        [
            "sigrok-cli",
            "-i",
            str(sr),
            "-P",
            "uart:baudrate=115200:rx=uart_tx",
            "-A",
            "uart=rx-data",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert bytes(int(ln.split()[-1], 16) for ln in out.splitlines()) == run["received"]


def test_status_after_the_boot(sim: SimProcess, run: dict[str, Any]) -> None:
    st = sim.control({"cmd": "status"})
    assert st["ok"] and st["boots"] >= 1 and st["console_dropped"] == 0 and not st["armed"]


@pytest.mark.parametrize(
    ("req", "error"),
    [
        ({"cmd": "fly"}, "unknown cmd"),
        ({"cmd": "stop"}, "not armed"),
        ({"cmd": "arm", "wiring": {"power": 9}}, "channel 0..7"),
        ({"cmd": "arm", "wiring": {"vcc": 0}}, "unknown signal"),
        ({"cmd": "arm", "samplerate": "fast", "wiring": {"power": 0}}, "samplerate"),
        ({"nocmd": 1}, '"cmd"'),
    ],
)
def test_bad_requests_get_errors(sim: SimProcess, req: dict[str, Any], error: str) -> None:
    resp = sim.control(req)
    assert resp["ok"] is False and error in resp["error"]


def test_stop_into_a_missing_directory_keeps_the_capture_armed(
    sim: SimProcess, tmp_path: Path
) -> None:
    ctl = SimControl(sim.control_path)
    ctl.arm({"power": 0})
    resp = sim.control({"cmd": "stop", "raw": str(tmp_path / "no" / "c.bin")})
    assert resp["ok"] is False and "existing directory" in resp["error"]
    assert ctl.stop(tmp_path / "c.bin")["samples"] >= 1


def test_shutdown_and_sigterm_clean_up(tmp_path: Path) -> None:
    with SimProcess(FAST, seed=1) as sim:
        state = Path(sim.control_path).parent
        SimControl(sim.control_path).shutdown()
        deadline = time.monotonic() + 5
        while state.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not state.exists()
    with SimProcess(FAST, seed=1, state_dir=tmp_path / "state") as sim:
        pid = sim.pid
        os.kill(pid, signal.SIGTERM)  # our own child, by PID
        deadline = time.monotonic() + 5
        while (tmp_path / "state" / "control.sock").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not (tmp_path / "state" / "control.sock").exists()
        assert (tmp_path / "state").is_dir()  # a given state dir is the caller's


def test_a_bad_profile_fails_to_start_with_its_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(FAST.read_text().replace("baud = 115200", "baud = 0"))
    with pytest.raises(InstrumentError, match=r"bad\.toml: key 'console\.baud'"):
        SimProcess(bad).start()


def test_options_reach_the_simulator(tmp_path: Path) -> None:
    opts = {"drift_ppm": -7.5, "usb_latency_ms": 4.0, "usb_buffer_bytes": 32.0, "nominal": True}
    with SimProcess(FAST, seed=3, options=opts) as sim, serial.Serial(sim.relay, 9600) as relay:
        ctl = SimControl(sim.control_path)
        ctl.arm({"power": 0})
        relay.write(frame(1, 1))
        relay.flush()
        time.sleep(0.05)
        ctl.stop(truth=tmp_path / "t.json")
    (boot,) = json.loads((tmp_path / "t.json").read_text())["boots"]
    assert boot["kernel_clock"]["drift_ppm"] == -7.5
    assert boot["console"]["usb_latency_ms"] == 4.0 and boot["console"]["usb_buffer_bytes"] == 32
    assert boot["completed"] is False  # stopped mid-boot: only what happened is reported
    assert all(s["factor"] == 1.0 for s in boot["stages"])
