"""The `visa` power driver: real PyVISA with pyvisa-py talking SCPI to the simulated
board's bench supply over 127.0.0.1 (and its pty), never a mock."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from rig.config.tomlcheck import Table
from rig.errors import ConfigError, InstrumentError
from rig.instruments.power_visa import VisaPower, VisaSettings
from rig.instruments.registry import POWER, BenchContext, DriverSpec
from simboard.client import SimProcess
from tests.waiting import wait_until

FAST = Path(__file__).parent.parent / "config" / "boards" / "fast.toml"
WHERE = Path("rig.toml")


def settings(**keys: Any) -> VisaSettings:
    t = Table(WHERE, {"resource": "TCPIP::127.0.0.1::5025::SOCKET", "voltage": 5.0,
                      "current_limit": 2, **keys}, "power")  # fmt: skip
    s = VisaPower.parse(t, Path())
    t.done()
    return s


def test_parse_reads_and_checks_its_keys() -> None:
    s = settings(sample_hz=20, timeout_s=1, baud=115200, termination="\r\n")
    assert s == VisaSettings(
        "TCPIP::127.0.0.1::5025::SOCKET", 5.0, 2.0, 20.0, 1.0, 115200, "\r\n", "volt-curr"
    )
    assert settings(resource="ASRL/dev/ttyUSB0::INSTR").sample_hz == 50.0
    assert settings(resource="sim", set_command="apply").set_command == "apply"
    bad = [
        ({"resource": "supply.lab:5025"}, "power.resource", "a VISA resource"),
        ({"voltage": 0}, "power.voltage", "within (0, 1000]"),
        ({"current_limit": "2A"}, "power.current_limit", "a finite number"),
        ({"sample_hz": -1}, "power.sample_hz", "from 0 to 1e+06"),
        ({"termination": ";"}, "power.termination", "'\\n'"),
        ({"set_command": "APPL"}, "power.set_command", "'volt-curr' or 'apply'"),
        ({"port": "/dev/ttyUSB0"}, "power.port", "unknown key"),
    ]
    for keys, key, expected in bad:
        with pytest.raises(ConfigError) as err:
            settings(**keys)
        assert f"{WHERE}: " in str(err.value) and key in str(err.value), keys
        assert expected in str(err.value), (keys, str(err.value))


def measurements(sim: SimProcess) -> int:
    """MEAS:CURR? and MEAS:VOLT? the simulated supply has answered (a reading is both)."""
    return int(sim.client.status()["supply"]["readings"])


def sampler_alive() -> bool:
    return any(t.name == "visa-boot" and t.is_alive() for t in threading.enumerate())


@pytest.fixture
def sim() -> Iterator[SimProcess]:
    with SimProcess(FAST, seed=3, options={"power_switch": "supply"}) as s:
        yield s


def test_powers_the_board_and_records_its_readings(sim: SimProcess, tmp_path: Path) -> None:
    psu = VisaPower(VisaSettings(sim.supply, 5.0, 2.0, sample_hz=100))
    try:
        d = psu.describe()
        assert (d["manufacturer"], d["model"], d["serial"]) == (
            "bootrig",
            "SIM-PSU1",
            "SIM00000003",
        )
        assert d["resource"] == sim.supply and d["firmware"]
        assert sim.client.status()["supply"]["current_limit_a"] == 2.0
        psu.off()
        assert not sim.client.status()["powered"]
        before = time.monotonic_ns()
        t_on = psu.on()
        assert before <= t_on <= time.monotonic_ns()
        # 40 readings at no more than 100 a second reach past the 0.3 s boot of the fast
        # profile into the application, however late a loaded host makes them.
        # (The off above began the off-hold's readings: count from here.)
        n0 = measurements(sim)
        wait_until("40 readings", lambda: measurements(sim) >= n0 + 2 * 40)
        assert sim.client.status()["powered"]
        out = psu.artifacts(tmp_path)["power_readings"]
        psu.off()
        wait_until("the board unpowered", lambda: not sim.client.status()["powered"], 10)
    finally:
        psu.close()
    recs = [json.loads(line) for line in (tmp_path / "power.jsonl").read_text().splitlines()]
    assert out["readings"] == len(recs) >= 40 and "error" not in out
    # Never faster than asked: the k-th reading is due k periods after power-on at the
    # earliest (a late one is taken at once, never in a burst to catch up). 1 ms covers
    # the float clock of the schedule; a sampler 3 % fast would break it by reading 40.
    for k, r in enumerate(recs):
        assert r["t_req_ns"] - t_on >= k * 10_000_000 - 1_000_000, (k, r["t_req_ns"] - t_on)
    span_s = (recs[-1]["t_ns"] - recs[0]["t_ns"]) / 1e9
    assert out["sample_hz"] == pytest.approx((len(recs) - 1) / span_s)
    assert out["sample_hz"] <= 100 * 1.01
    for r in recs:
        assert r["t_req_ns"] < r["t_ns"] < r["t_ans_ns"] and r["t_req_ns"] > t_on
        assert r["t_ns"] == (r["t_req_ns"] + r["t_ans_ns"]) // 2
    assert recs[0]["a"] < 0.05 or recs[1]["a"] > 0.2  # off at first, or already booting
    assert max(r["a"] for r in recs) == pytest.approx(0.62, rel=0.1)  # the application
    assert all(4.9 < r["v"] < 5.0 for r in recs[3:])  # set-point less the output drop


def test_commands_leave_at_once_on_a_socket(sim: SimProcess) -> None:
    """TCP_NODELAY, as NI-VISA has it: with Nagle's algorithm (pyvisa-py's default) the
    first MEAS:CURR? after OUTP ON waited for the supply's delayed ACK, 40 ms."""
    from pyvisa import constants

    psu = VisaPower(VisaSettings(sim.supply, 5.0, 2.0, sample_hz=0))
    try:
        nodelay = psu._inst.get_visa_attribute(constants.VI_ATTR_TCPIP_NODELAY)
        assert nodelay == constants.VI_TRUE
    finally:
        psu.close()


def test_serial_resource_and_apply(sim: SimProcess, tmp_path: Path) -> None:
    psu = VisaPower(VisaSettings(sim.supply_serial, 3.3, 1.5, sample_hz=0, set_command="apply"))
    try:
        assert sim.client.status()["supply"]["volts"] == 3.3
        psu.on()
        # As fast as the pty answers (1 ms a query in the supply plus pyvisa-py's
        # polling): a few hundred a second. A sampler that paced sample_hz = 0 as
        # anything slower than 3 a second would miss the deadline.
        wait_until("31 readings over the pty", lambda: measurements(sim) >= 2 * 31, 10)
        out = psu.artifacts(tmp_path)["power_readings"]
        psu.off()
    finally:
        psu.close()
    assert out["readings"] >= 31 and "error" not in out, out
    assert len((tmp_path / "power.jsonl").read_text().splitlines()) == out["readings"]


def test_bad_resources_are_instrument_errors_naming_them() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for resource in (f"TCPIP::127.0.0.1::{port}::SOCKET", "ASRL/dev/bootrig-no-such-tty::INSTR"):
        t0 = time.monotonic()
        with pytest.raises(InstrumentError) as err:
            VisaPower(VisaSettings(resource, 5.0, 1.0, timeout_s=0.5))
        assert resource in str(err.value) and "Traceback" not in str(err.value)
        assert time.monotonic() - t0 < 3


@contextlib.contextmanager
def mute_server() -> Iterator[int]:
    """Accepts connections and never answers: a supply that hangs."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    conns: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                conns.append(srv.accept()[0])

    th = threading.Thread(target=accept, daemon=True)
    th.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        th.join()
        for c in conns:
            c.close()
        srv.close()


def test_a_supply_that_does_not_answer_times_out() -> None:
    with mute_server() as port:
        resource = f"TCPIP::127.0.0.1::{port}::SOCKET"
        t0 = time.monotonic()
        with pytest.raises(InstrumentError, match=rf"{resource}: \*IDN\?: .*(?i:timeout)"):
            VisaPower(VisaSettings(resource, 5.0, 1.0, timeout_s=0.3))
        assert time.monotonic() - t0 < 2


def test_a_set_point_the_supply_refuses_is_an_error(sim: SimProcess) -> None:
    with pytest.raises(InstrumentError, match=r"set VOLT 45, the supply reads back 5"):
        VisaPower(VisaSettings(sim.supply, 45.0, 1.0))  # beyond the simulated supply's 30 V


def test_sampling_that_fails_mid_boot_is_recorded_not_raised(tmp_path: Path) -> None:
    sim = SimProcess(FAST, seed=4, options={"power_switch": "supply"}).start()
    try:
        psu = VisaPower(VisaSettings(sim.supply, 5.0, 2.0, sample_hz=200, timeout_s=0.3))
        psu.on()
        wait_until("6 readings", lambda: measurements(sim) >= 2 * 6)
        sim.close()  # the supply is gone (unplugged) while the board boots
        # The sampler's next query fails (at the latest after its 0.3 s timeout): it
        # records why and ends, while the boot goes on.
        wait_until("the sampler to give up", lambda: not sampler_alive())
        out = psu.artifacts(tmp_path)["power_readings"]
        assert out["readings"] > 5 and sim.supply in out["error"]
        with pytest.raises(InstrumentError, match="OUTP OFF"):
            psu.off()
        psu.close()
    finally:
        sim.close()


def test_build_uses_the_simulated_supply_and_rewires_the_bench() -> None:
    with ExitStack() as stack, SimProcess(FAST, seed=6) as sim:
        assert sim.control({"cmd": "status"})["power_switch"] == "relay"
        ctx = BenchContext(shared=None, stack=stack, sim=sim)  # type: ignore[arg-type]
        psu = POWER.build(DriverSpec("visa", settings(resource="sim")), ctx)
        assert psu.resource == sim.supply
        assert sim.control({"cmd": "status"})["power_switch"] == "supply"
        stack.close()  # the registry handed the supply to the bench's stack to release
        assert psu._inst is None
        with pytest.raises(InstrumentError, match="needs a \\[sim\\] table"):
            VisaPower.build(settings(resource="sim"), BenchContext(shared=None, stack=stack))  # type: ignore[arg-type]
