"""More power drivers: a Numato-style ASCII relay (the simulated board speaks it on a
pty, like the module on USB) and any program as a power switch (argument lists, no
shell, timeouts). Each runs a whole measured boot of the simulated board."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rig.errors import ConfigError, InstrumentError
from rig.instruments.drivers import load_config
from rig.instruments.power_command import CommandPower
from rig.instruments.relay_numato import NumatoRelay
from simboard.client import SimProcess
from tests.e2e import REPO, make_config

RIG = [sys.executable, "-m", "rig"]


def _run(cfg: Path) -> dict:
    p = subprocess.run(
        [*RIG, "run", "--config", str(cfg), "--json"], capture_output=True, text=True, timeout=120
    )
    assert p.stdout, p.stderr[-2000:]
    return json.loads(p.stdout)


def _power(cfg: Path, table: str) -> None:
    text = cfg.read_text()
    start = text.index("[power]")
    end = text.index("[console]")
    keep = "\n".join(line for line in text[start:end].splitlines() if line.startswith("off_hold_s"))
    cfg.write_text(text[:start] + "[power]\n" + table + keep + "\n\n" + text[end:])


def test_numato_relay_boots_the_board(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    _power(cfg, 'driver = "numato"\nport = "sim"\nrelay = 0\n')
    out = _run(cfg)
    assert out["report"]["outcome"] == "ok"
    run = json.loads((Path(out["folder"]) / "run.json").read_text())
    assert run["instruments"]["power_device"]["version"] == "00000008"


def test_numato_errors_are_clear(tmp_path: Path) -> None:
    with SimProcess(REPO / "config" / "boards" / "fast.toml") as sim:
        relay = NumatoRelay(sim.relay_numato, relay=0)
        assert relay.command("relay read 0") == "off"
        relay.close()
        with pytest.raises(InstrumentError, match=r"no answer to 'ver'.*is it a Numato module"):
            NumatoRelay(sim.console, timeout_s=0.3)  # the console pty never prompts
    cfg = make_config(tmp_path)
    _power(cfg, 'driver = "numato"\nport = "sim"\nrelay = 40\n')
    with pytest.raises(ConfigError, match=r"key 'power.relay': expected a relay number 0..31"):
        load_config(cfg)


def test_command_driver_switches_through_a_program(tmp_path: Path) -> None:
    """The relay driven by a program: here `python -c` writing CH340 frames to the
    simulated relay, standing in for a PDU's CLI or uhubctl."""
    with SimProcess(REPO / "config" / "boards" / "fast.toml", seed=4) as sim:
        frame = "import serial,sys; serial.Serial(sys.argv[1]).write(bytes([0xA0,1,{s},0xA1+{s}]))"
        on = [sys.executable, "-c", frame.format(s=1), sim.relay]
        off = [sys.executable, "-c", frame.format(s=0), sim.relay]
        cfg = tmp_path / "rig.toml"
        cfg.write_text(
            f'[rig]\nresults_dir = "{tmp_path / "results"}"\n'
            f'[power]\ndriver = "command"\non = {json.dumps(on)}\noff = {json.dumps(off)}\n'
            f'off_hold_s = 0.1\n[console]\nport = "{sim.console}"\n[timeouts]\nboot_s = 10\n'
        )
        out = _run(cfg)
    assert out["report"]["outcome"] == "ok", out["report"]["outcome"]
    run = json.loads((Path(out["folder"]) / "run.json").read_text())
    assert run["instruments"]["power_device"]["on"] == on


def test_command_driver_failures_name_the_command() -> None:
    with pytest.raises(InstrumentError, match=r"'no-such-power-tool' not found"):
        CommandPower(("no-such-power-tool",), ("x",)).on()
    with pytest.raises(InstrumentError, match=r"failed \(3\): pdu says no"):
        CommandPower(("sh", "-c", "echo pdu says no >&2; exit 3"), ("true",)).on()
    with pytest.raises(InstrumentError, match=r"did not finish within 0.2 s"):
        CommandPower(("sleep", "5"), ("true",), timeout_s=0.2).on()


def test_a_command_that_leaves_a_child_running_returns_when_it_exits(tmp_path: Path) -> None:
    """A power script that starts a daemon (`sleep 30 &` stands in for it): the child
    inherits the command's stdout and stderr, so waiting for them to close would wait
    for the child, and the rig would report a timeout for a command that had worked."""
    pids = tmp_path / "pids"
    start = f"sleep 30 & echo $! >> {pids}; "
    power = CommandPower(
        ("sh", "-c", start + "echo relay on"),
        ("sh", "-c", start + "echo relay says no >&2; exit 3"),
        timeout_s=5,
    )
    try:
        power.on()
        with pytest.raises(InstrumentError, match=r"failed \(3\): relay says no$"):
            power.off()
    finally:
        for pid in pids.read_text().split() if pids.exists() else ():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
    assert len(pids.read_text().split()) == 2


def test_command_argv_must_be_a_list(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    _power(cfg, 'driver = "command"\non = "uhubctl -a on; rm -rf /"\noff = ["true"]\n')
    with pytest.raises(ConfigError, match=r"key 'power.on': expected an argument list"):
        load_config(cfg)
