"""Two rigs cannot drive one board (issue 22, items 2 and 12): a bench claims its console
and its power target on this host by a normalised identity, network consoles and
commands too, and a refused rig is told which rig holds them (PID, command line, the
run it measures), not which processes have a device open (the far end of a pty).

The end-to-end cases run two real `rig run` on the simulated board as a bench would
have it: a `command` switching its relay, the console through a real ser2net
(`socket://`) or its pty itself."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rig.errors import InstrumentError
from rig.instruments.drivers import driver_specs, load_config
from rig.instruments.target_claim import (
    Target,
    TargetClaims,
    command_key,
    port_keys,
    targets,
    visa_keys,
)
from simboard.client import SimProcess
from tests.e2e import REPO
from tests.qemu_env import rig_run
from tests.ser2net import free_port, ser2net
from tests.waiting import wait_until

#: A CH340 frame written to the simulated relay's pty by a program of its own, as a
#: bench's switching script would: the `command` power driver runs it.
SWITCH = "import sys; open(sys.argv[1], 'wb', buffering=0).write(bytes.fromhex(sys.argv[2]))"


def test_two_spellings_of_one_target_are_one_claim(tmp_path: Path) -> None:
    port = free_port()
    raw = set(port_keys(f"socket://127.0.0.1:{port}"))
    assert raw & set(port_keys(f"socket://localhost:{port}"))  # the name resolves there
    assert set(port_keys(f"rfc2217://127.0.0.1:{port}?ign_set_control")) == raw
    assert set(port_keys(f"spy://socket://127.0.0.1:{port}?file=x")) == raw
    assert set(visa_keys(f"TCPIP::127.0.0.1::{port}::SOCKET")) == raw
    assert not raw & set(port_keys(f"socket://127.0.0.1:{port + 1}"))
    assert port_keys("loop://") == ()  # reaches no board
    master, slave = os.openpty()
    try:
        tty = os.ttyname(slave)
        (tmp_path / "console").symlink_to(tty)
        assert port_keys(str(tmp_path / "console")) == port_keys(tty)
        assert visa_keys(f"ASRL{tty}::INSTR") == port_keys(tty)
    finally:
        os.close(master)
        os.close(slave)
    sh = shutil.which("sh")
    assert sh is not None
    assert command_key(["sh", "-c", "on"]) == command_key([os.path.realpath(sh), "-c", "on"])
    assert command_key(["sh", "-c", "on"]) != command_key(["sh", "-c", "off"])


def test_a_config_names_what_its_bench_drives(tmp_path: Path) -> None:
    cfg = tmp_path / "rig.toml"
    cfg.write_text(
        '[power]\ndriver = "command"\non = ["pdu", "on", "3"]\noff = ["pdu", "off", "3"]\n'
        '[console]\nport = "socket://127.0.0.1:4000"\n'
    )
    c = load_config(cfg)
    got = targets(c.console.port, driver_specs(c))
    assert [t.what for t in got] == [
        "console socket://127.0.0.1:4000", "power command ['pdu', 'on', '3']",
    ]  # fmt: skip
    assert len(got[1].keys) == 2  # the on and the off command each
    sim = load_config(REPO / "config" / "rig.toml")
    assert targets(sim.console.port, driver_specs(sim)) == []  # the rig's own process


def test_a_claim_goes_with_its_holder_even_when_killed(tmp_path: Path) -> None:
    key = f"test:{os.getpid()}:{tmp_path}"
    hold = (
        "import sys; from rig.instruments.target_claim import Target, TargetClaims; "
        "TargetClaims([Target('console x', (sys.argv[1],))]).claim(); "
        "print('held', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen([sys.executable, "-c", hold, key], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(InstrumentError) as e:
            TargetClaims([Target("console x", (key,))]).claim()
        assert str(e.value).startswith(
            f"console x is in use by another rig on this host: PID {holder.pid} (`"
        ), e.value
        assert "TargetClaims" in str(e.value)  # its command line
        holder.kill()
        holder.wait()
        mine = TargetClaims([Target("console x", (key,))])
        mine.claim()  # the kernel dropped the SIGKILLed holder's flock
        mine.release()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def config(tmp: Path, name: str, relay: str, console: str, boot_s: float = 60) -> Path:
    on = [sys.executable, "-c", SWITCH, relay, "a00101a2"]
    off = [sys.executable, "-c", SWITCH, relay, "a00100a1"]
    path = tmp / f"{name}.toml"
    path.write_text(
        f'[rig]\nresults_dir = "{tmp / "results"}"\n'
        f'[power]\ndriver = "command"\non = {json.dumps(on)}\noff = {json.dumps(off)}\n'
        f'off_hold_s = 0.1\n[console]\nport = "{console}"\n[timeouts]\nboot_s = {boot_s}\n'
    )
    return path


@pytest.mark.parametrize("console", ["socket", "device"])
def test_a_second_rig_on_the_board_is_refused_naming_the_first(
    console: str, tmp_path: Path
) -> None:
    # The baseline board boots for 19 s: the first rig is mid-boot when the others come.
    profile = REPO / "config" / "boards" / "ecovec-baseline.toml"
    with SimProcess(profile, seed=3) as sim, ser2net(sim.console, tmp_path) as ports:
        url = f"socket://127.0.0.1:{ports['raw']}" if console == "socket" else sim.console
        status = sim.client.status
        cfg = config(tmp_path, "a", sim.relay, url)
        first = subprocess.Popen(
            [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            folder = wait_until(
                "the first rig's run", lambda: next((tmp_path / "results").glob("2*"), None)
            )
            wait_until("its power-on", lambda: status()["powered"])
            code, out = rig_run(config(tmp_path, "b", sim.relay, url), timeout=120)
            assert code == 3 and out["kind"] == "instrument", out
            says = (
                f"console {url} and power command {[sys.executable, '-c', SWITCH]}"[:-1]
                + f", '{sim.relay}', 'a00101a2'] are in use by another rig on this host: "
                f"PID {first.pid} (`{sys.executable} -m rig run --config {cfg} --json`), "
                f"measuring into {folder}"
            )
            assert out["error"].startswith(says), out["error"]
            # Another spelling of the console, with a power target of its own: the
            # console alone is refused.
            other = url.replace("127.0.0.1", "localhost")
            if console == "device":
                other = str(tmp_path / "console-link")
                Path(other).symlink_to(url)
            code, out = rig_run(config(tmp_path, "c", "/nonexistent", other), timeout=120)
            assert code == 3 and out["error"].startswith(
                f"console {other} is in use by another rig on this host: PID {first.pid} (`"
            ), out
            assert status()["boots"] == 1  # nobody power-cycled the first rig's board
        finally:
            first.send_signal(signal.SIGINT)
            first.communicate(timeout=60)
        assert first.returncode == 130
        # Released with the first rig: the same bench now drives the board.
        code, out = rig_run(config(tmp_path, "d", sim.relay, url, boot_s=1), timeout=120)
        assert code == 1 and out["report"]["outcome"] == "hang_in_bootloader", out
