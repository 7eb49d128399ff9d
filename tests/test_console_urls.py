"""Console URLs beyond device paths: `socket://` and `rfc2217://` through a real ser2net
(Debian's) on 127.0.0.1, read by the same reader, and a whole measured boot through it."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import tty
from pathlib import Path

import pytest

from rig.errors import InstrumentError
from rig.instruments.console_serial import SerialConsole
from rig.instruments.exclusive import holders
from simboard.client import SimProcess
from tests.e2e import REPO
from tests.ser2net import ser2net, wait_opened

URLS = {"raw": "socket://127.0.0.1:{}", "rfc2217": "rfc2217://127.0.0.1:{}?ign_set_control"}


@pytest.mark.parametrize("kind", sorted(URLS))
def test_console_reads_through_ser2net(kind: str, tmp_path: Path) -> None:
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    try:
        with ser2net(os.ttyname(slave), tmp_path) as ports:
            con = SerialConsole(URLS[kind].format(ports[kind]), 115200)
            try:
                wait_opened(os.ttyname(slave), tmp_path)  # on the client's connect
                con.start(tmp_path / "console.jsonl")
                sent = [b"U-Boot 2023.01\r\n", b"bootrig: marker bootm\r\n"]
                for line in sent:
                    os.write(master, line)
                    time.sleep(0.05)
                deadline = time.monotonic() + 5
                while sum(len(c.data) for c in con.chunks) < sum(map(len, sent)):
                    assert time.monotonic() < deadline, con.chunks
                    time.sleep(0.02)
            finally:
                chunks = con.stop()
                con.close()
    finally:
        os.close(master)
        os.close(slave)
    assert b"".join(c.data for c in chunks) == b"".join(sent)
    recs = [json.loads(x) for x in (tmp_path / "console.jsonl").read_text().splitlines()]
    assert b"".join(base64.b64decode(r["data_b64"]) for r in recs) == b"".join(sent)
    assert [r["t_ns"] for r in recs] == sorted(r["t_ns"] for r in recs)


def test_unreachable_url_names_it() -> None:
    with pytest.raises(InstrumentError, match=r"console: cannot open socket://127\.0\.0\.1:9"):
        SerialConsole("socket://127.0.0.1:9", 115200)


def test_measured_boot_with_the_console_behind_ser2net(tmp_path: Path) -> None:
    """The simulated board as an outside process: its relay pty for power, its console
    only through ser2net's TCP port, exactly as a lab's console server would serve it."""
    profile = REPO / "config" / "boards" / "fast.toml"
    with SimProcess(profile, seed=3) as sim, ser2net(sim.console, tmp_path) as ports:
        cfg = tmp_path / "rig.toml"
        cfg.write_text(
            f'[rig]\nresults_dir = "{tmp_path / "results"}"\n'
            f'[power]\nport = "{sim.relay}"\noff_hold_s = 0.1\n'
            f'[console]\nport = "socket://127.0.0.1:{ports["raw"]}"\n'
            "[timeouts]\nboot_s = 10\n"
        )
        p = subprocess.run(
            [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    out = json.loads(p.stdout)
    report = out["report"]
    assert p.returncode == 0 and report["outcome"] == "ok", report["outcome"]
    assert report["time_base"]["reference"] == "host"
    assert {e["name"] for e in report["events"]} >= {"bootm", "do_mount_root", "ui_ready"}
    run = json.loads((Path(out["folder"]) / "run.json").read_text())
    assert run["instruments"]["console"].startswith("socket://127.0.0.1:")


def test_a_second_rig_is_told_who_holds_the_port(tmp_path: Path) -> None:
    master, slave = os.openpty()
    path = os.ttyname(slave)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from rig.instruments.console_serial import SerialConsole; "
         "c = SerialConsole(sys.argv[1], 115200); print('open', flush=True); time.sleep(30)",
         path],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(
            InstrumentError, match=rf"console: {path} is in use by PID {holder.pid}"
        ):
            SerialConsole(path, 115200)
        holder.kill()
        holder.wait()
        # The lock goes with its holder: the holder's console reader process shares the
        # locked descriptor and exits on the end of its control pipe, a moment after
        # the holder (longer on a loaded host), so wait for the port to be free.
        deadline = time.monotonic() + 30
        while holders(path) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert holders(path) == []
        SerialConsole(path, 115200).close()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        os.close(master)
        os.close(slave)
