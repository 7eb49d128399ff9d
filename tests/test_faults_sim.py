"""Fault injection in the simulated board: per-boot rates, a closed console pty, a
missing marker, line noise, a failing analyzer; and the rig config's [sim.faults]."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest
import serial

from rig.errors import ConfigError
from rig.instruments.drivers import load_config
from simboard.client import SimControl, SimProcess
from simboard.faults import FaultRates, FaultSpecError, draw, parse_rates
from simboard.timeline import PANICS, Fault, load, plan
from tests.e2e import make_config

FAST = Path(__file__).resolve().parents[1] / "config" / "boards" / "fast.toml"
ON, OFF = bytes((0xA0, 1, 1, 0xA2)), bytes((0xA0, 1, 0, 0xA1))


def test_panic_stages_match_the_panic_texts() -> None:
    assert set(FaultRates().panic_stages) == set(PANICS)


@pytest.mark.parametrize(
    ("text", "kind", "stage", "at"),
    [
        ("console-closed", "console-closed", None, 0.5),
        ("console-closed:0.25", "console-closed", None, 0.25),
        ("missing-marker:bootm", "missing-marker", "bootm", None),
        ("garbage", "garbage", None, 0.0),
        ("garbage:7", "garbage", None, 7.0),
        ("analyzer", "analyzer", None, None),
    ],
)
def test_new_fault_kinds_parse_and_print(
    text: str, kind: str, stage: str | None, at: float | None
) -> None:
    f = Fault.parse(text)
    assert (f.kind, f.stage, f.at) == (kind, stage, at)
    assert Fault.parse(str(f)) == f


@pytest.mark.parametrize(
    "text", ["console-closed:2", "garbage:1.5", "missing-marker:x", "analyzer:1"]
)
def test_bad_new_faults_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="console-closed"):
        Fault.parse(text)


def test_missing_marker_has_no_gpio_and_no_tag() -> None:
    p = load(FAST)
    ok = plan(p, seed=1)
    tl = plan(p, seed=1, fault=Fault.parse("missing-marker:do_mount_root"))
    assert "do_mount_root" not in tl.markers and set(ok.markers) - set(tl.markers) == {
        "do_mount_root"
    }
    assert b"marker do_mount_root" not in tl.data and b"marker ui_ready" in tl.data
    assert [s.name for s in tl.stages] == [s.name for s in ok.stages]  # the boot goes on


def test_garbage_goes_before_a_line_and_stays_out_of_the_truth() -> None:
    p = load(FAST)
    ok = plan(p, seed=1)
    tl = plan(p, seed=1, fault=Fault.parse("garbage:3"))
    noise = len(tl.data) - len(ok.data)
    assert 4 <= noise <= 32
    start = tl.lines[3].offset
    assert (
        tl.data[start - noise : start] not in (b"",) and b"\n" not in tl.data[start - noise : start]
    )
    assert [ln.text for ln in tl.lines] == [ln.text for ln in ok.lines]
    assert tl.data.replace(tl.data[start - noise : start], b"", 1) == ok.data


def test_rates_draw_is_seeded_and_proportional() -> None:
    rates = parse_rates({"hang": 0.2, "panic": 0.1, "hang_stages": ["kernel"], "analyzer": 0.1})
    faults = [draw(rates, 7, k, 40) for k in range(2000)]
    assert faults == [draw(rates, 7, k, 40) for k in range(2000)]  # reproducible
    kinds = Counter((f or "none").split(":")[0] for f in faults)
    assert kinds["hang"] / 2000 == pytest.approx(0.2, abs=0.03)
    assert kinds["panic"] / 2000 == pytest.approx(0.1, abs=0.02)
    assert kinds["analyzer"] / 2000 == pytest.approx(0.1, abs=0.02)
    assert {f for f in faults if f and f.startswith("hang")} == {"hang:kernel"}
    for f in faults:
        if f:
            Fault.parse(f)  # every drawn fault is one the simulator understands


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"hang": 1.5}, "hang"),
        ({"hang": True}, "hang"),
        ({"hang_stages": ["kernal"]}, "hang_stages"),
        ({"missing_markers": ["ui_ready"]}, "missing_markers"),
        ({"melt": 0.1}, "melt"),
        ({"hang": 0.6, "panic": 0.6}, ""),
    ],
)
def test_bad_rates_name_the_key(data: dict, key: str) -> None:
    with pytest.raises(FaultSpecError) as e:
        parse_rates(data)
    assert e.value.key == key


def test_config_sim_faults_become_sim_options(tmp_path: Path) -> None:
    cfg = load_config(make_config(tmp_path, extra="\n[sim.faults]\nhang = 0.05\npanic = 0.02\n"))
    assert cfg.sim is not None
    rates = FaultRates.from_json(cfg.sim.options["faults"])
    assert (rates.hang, rates.panic, rates.console_lost) == (0.05, 0.02, 0.0)
    bad = make_config(tmp_path, extra='\n[sim.faults]\nhang_stages = ["nowhere"]\n')
    with pytest.raises(ConfigError, match=r"key 'sim\.faults\.hang_stages': expected a non-empty"):
        load_config(bad)


def _boot(relay: serial.Serial, con: serial.Serial, seconds: float) -> tuple[bytes, str | None]:
    relay.write(ON)
    relay.flush()
    got, err = b"", None
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            got += con.read(con.in_waiting or 1)
    except serial.SerialException as e:
        err = str(e)
        time.sleep(max(0.0, deadline - time.monotonic()))  # the board itself boots on
    relay.write(OFF)
    relay.flush()
    time.sleep(0.05)
    return got, err


def test_console_closed_mid_boot_then_reopened_by_its_link(tmp_path: Path) -> None:
    options = {"faults": FaultRates(console_lost=1.0).to_json()}
    with SimProcess(FAST, seed=3, options=options) as sim, serial.Serial(sim.relay, 9600) as relay:
        assert Path(sim.console).is_symlink()  # a stable name, like /dev/serial/by-id/...
        ctl = SimControl(sim.control_path)
        for boot in range(2):
            with serial.Serial(sim.console, 115200, timeout=0.05) as con:
                ctl.arm({"power": 0, "uart_tx": 1})
                got, err = _boot(relay, con, 0.6)
                ctl.stop(truth=tmp_path / f"t{boot}.json")
            assert err is not None, "the pty closing must reach the reader as an error"
            truth = json.loads((tmp_path / f"t{boot}.json").read_text())["boots"][0]
            assert truth["fault"].startswith("console-closed:") and truth["completed"]
            assert 0 < len(got) < truth["console"]["bytes"]  # part of the boot, not all
        assert ctl.status()["console_hangups"] == 2


def test_analyzer_fault_fails_stop_but_writes_truth(tmp_path: Path) -> None:
    with (
        SimProcess(FAST, seed=1, options={"fault": "analyzer"}) as sim,
        serial.Serial(sim.relay, 9600) as relay,
        serial.Serial(sim.console, 115200, timeout=0.05) as con,
    ):
        ctl = SimControl(sim.control_path)
        ctl.arm({"power": 0, "uart_tx": 1})
        got, _ = _boot(relay, con, 0.45)
        resp = ctl.request(
            {"cmd": "stop", "raw": str(tmp_path / "c.bin"), "truth": str(tmp_path / "t.json")}
        )
        assert not resp["ok"] and "injected fault 'analyzer'" in resp["error"]
        assert not (tmp_path / "c.bin").exists()
        assert json.loads((tmp_path / "t.json").read_text())["boots"][0]["fault"] == "analyzer"
        assert b"bootrig: marker ui_ready" in got  # the board and its console were fine
        ctl.arm({"power": 0})  # and the analyzer can be armed again
