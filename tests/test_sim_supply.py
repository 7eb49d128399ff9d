"""The simulated SCPI bench supply: its parser, its rail model, and the real PyVISA
(pyvisa-py) talking to it over 127.0.0.1 and over its pty."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pyvisa

from simboard import scpi
from simboard.client import SimProcess
from simboard.current import rail
from simboard.timeline import load

FAST = Path(__file__).parent.parent / "config" / "boards" / "fast.toml"


def test_scpi_short_and_long_forms() -> None:
    assert scpi.parse("MEAS:CURR?") == scpi.Command("MEAS:CURR", True, ())
    assert scpi.parse("measure:scalar:current:dc?") == scpi.Command("MEAS:CURR", True, ())
    assert scpi.parse(":SOUR:VOLT:LEV:IMM 3.3") == scpi.Command("VOLT", False, ("3.3",))
    assert scpi.parse("APPL 5, 1.5").args == ("5", "1.5")
    assert scpi.parse("*idn?") == scpi.Command("*IDN", True, ())
    assert scpi.split_line("VOLT 5; CURR 1;:OUTP ON") == ["VOLT 5", "CURR 1", ":OUTP ON"]
    with pytest.raises(scpi.ScpiError, match="-113"):
        scpi.parse("MEASU:CURR?")  # neither the short nor the long form
    with pytest.raises(scpi.ScpiError, match="-222"):
        scpi.number(scpi.parse("VOLT 99"), 0, 0.0, 30.0)
    with pytest.raises(scpi.ScpiError, match="-104"):
        scpi.boolean(scpi.parse("OUTP MAYBE"))


def test_rail_energy_is_the_integral_of_v_times_i() -> None:
    prof = load(FAST)
    ends = [0.05, 0.17, 0.2, 0.24, 0.3]
    r = rail(prof, 3, 0, ends, 5.0, 3.0, float("inf"), 0.0)
    t = np.linspace(0.0, 0.3, 3_000_001)  # 0.1 us: brute force
    a = r.amps(t)
    p = a * r.volts_at(t, a)
    brute = float(np.sum((p[1:] + p[:-1]) / 2) * (t[1] - t[0]))
    assert r.energy(0.0, 0.3) == pytest.approx(brute, rel=1e-5)
    # Levels follow the stages; the inrush decays from the edge.
    for (t0, t1), st in zip(zip([0.0, *ends], ends, strict=False), prof.stages, strict=True):
        mid = (t0 + t1) / 2
        assert r.amps(np.array([mid]))[0] == pytest.approx(st.current_a, rel=prof.supply.ripple)
    inrush = prof.supply.inrush_a
    assert r.amps(np.array([0.0]))[0] == pytest.approx(prof.stages[0].current_a + inrush, rel=0.06)
    assert r.amps(np.array([-1e-6, 0.31]))[0] == 0.0
    # The current limit clamps, and a cut rail draws nothing.
    low = rail(prof, 3, 0, ends, 5.0, 0.3, 0.1, 0.0)
    assert low.amps(np.linspace(0, 0.099, 1000)).max() <= 0.3
    assert low.amps(np.array([0.1, 0.2])).max() == 0.0


@pytest.fixture(scope="module")
def rm() -> Iterator[pyvisa.ResourceManager]:
    m = pyvisa.ResourceManager("@py")
    yield m
    m.close()


def _open(rm: pyvisa.ResourceManager, resource: str) -> Any:
    return rm.open_resource(resource, read_termination="\n", write_termination="\n", timeout=3000)


def test_supply_switches_the_board_and_reads_what_it_draws(
    rm: pyvisa.ResourceManager, tmp_path: Path
) -> None:
    with SimProcess(FAST, seed=5, options={"power_switch": "supply"}) as sim:
        assert sim.info["power_switch"] == "supply"
        psu = _open(rm, sim.supply)
        try:
            assert psu.query("*IDN?").startswith("bootrig,SIM-PSU1,SIM00000005,")
            psu.write("APPL 5,2")
            assert psu.query("APPL?") == "5.000,2.0000"
            assert psu.query("OUTP?") == "0"
            assert float(psu.query("MEAS:CURR?")) == pytest.approx(0.0, abs=0.01)
            assert not sim.client.status()["powered"]
            sim.client.arm({"power": 0}, 100_000)
            psu.write("OUTP ON")
            t0 = time.monotonic()
            readings = []
            while time.monotonic() - t0 < 0.4:
                t = time.monotonic_ns()
                a = float(psu.query("MEAS:CURR?"))
                readings.append(((t + time.monotonic_ns()) // 2, a))
            assert sim.client.status()["powered"]
            truth = tmp_path / "truth.json"
            sim.client.stop(truth=truth)
            psu.write("OUTP OFF")
            time.sleep(0.01)
            assert not sim.client.status()["powered"]
            psu.write("FOO")
            assert psu.query("SYST:ERR?").startswith('-113,"Undefined header')
            assert psu.query("SYST:ERR?") == '0,"No error"'
        finally:
            psu.close()
    boot = json.loads(truth.read_text())["boots"][0]
    assert boot["supply"] == {"power_switch": "supply", "volts": 5.0, "current_limit_a": 2.0}
    assert boot["bounce_s"] == [0.0]  # an output has no contacts to bounce
    prof = load(FAST)
    # Away from the boundaries a reading is the stage's level (+ wobble and noise).
    for st, spec in zip(boot["stages"], prof.stages, strict=True):
        inner = [
            a
            for t, a in readings
            if st["start_s"] + 3e-3 < (t - boot["power_edge_ns"]) / 1e9 < st["end_s"] - 3e-3
        ]
        assert inner, st["name"]
        assert np.median(inner) == pytest.approx(spec.current_a, rel=0.08), st["name"]
        assert st["energy_j"] == pytest.approx(5.0 * spec.current_a * st["duration_s"], rel=0.1)


def test_a_slow_supply_answers_no_faster_than_its_rate(rm: pyvisa.ResourceManager) -> None:
    with SimProcess(FAST, seed=1, options={"supply_rate": 20}) as sim:
        psu = _open(rm, sim.supply)
        try:
            t0 = time.monotonic()
            for _ in range(6):
                psu.query("MEAS:VOLT?")
            took = time.monotonic() - t0
            assert psu.query("OUTP?") == "1"  # power switch "relay": the output stays on
            assert float(psu.query("MEAS:VOLT?")) == pytest.approx(5.0, abs=0.01)
        finally:
            psu.close()
    assert took >= 6 / 20 - 0.005


def test_relay_switched_board_is_read_through_the_serial_port(rm: pyvisa.ResourceManager) -> None:
    """The supply's pty as an ASRL resource; the relay switches, the supply only reads."""
    from rig.instruments.relay_ch340 import Ch340Relay

    with SimProcess(FAST, seed=2) as sim:
        assert sim.supply_serial.startswith("ASRL/dev/")
        psu = _open(rm, sim.supply_serial)
        relay = Ch340Relay(sim.relay)
        try:
            assert float(psu.query("MEAS:CURR?")) == pytest.approx(0.0, abs=0.01)
            relay.on()
            time.sleep(0.03)  # relay delay, bounce, then the bootloader draws
            a = float(psu.query("MEAS:CURR?"))
            assert a == pytest.approx(load(FAST).stages[0].current_a, rel=0.1)
            relay.off()
        finally:
            relay.close()
            psu.close()
