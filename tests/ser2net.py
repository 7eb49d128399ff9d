"""A real ser2net (Debian's) on 127.0.0.1 in front of a serial device, for the tests of
network console URLs. Started per test, always stopped by its PID."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_opened(device: str, tmp: Path, timeout_s: float = 30.0) -> None:
    """Until the ser2net started in `tmp` holds `device` open (it opens the device when a
    client connects, and may flush what was written before): an event, not a sleep."""
    pid = int((tmp / "ser2net.pid").read_text())
    real = os.path.realpath(device)
    deadline = time.monotonic() + timeout_s
    while True:
        with contextlib.suppress(OSError):
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(_link(f"/proc/{pid}/fd/{fd}") == real for fd in fds):
                return
        assert time.monotonic() < deadline, f"ser2net (PID {pid}) never opened {device}"
        time.sleep(0.02)


def _link(path: str) -> str | None:
    try:
        return os.path.realpath(os.readlink(path))
    except OSError:
        return None


@contextmanager
def ser2net(device: str, tmp: Path) -> Iterator[dict[str, int]]:
    """Serve `device` raw on one port and as RFC 2217 on another: {"raw": p, "rfc2217": q}."""
    binary = shutil.which("ser2net")
    assert binary, "ser2net is installed by `make setup-test` (Debian package ser2net)"
    ports = {"raw": free_port(), "rfc2217": free_port()}
    cfg = tmp / "ser2net.yaml"
    cfg.write_text(
        "%YAML 1.1\n---\n"
        f"connection: &raw\n  accepter: tcp,127.0.0.1,{ports['raw']}\n"
        f"  connector: serialdev,{device},115200n81,local\n"
        f"connection: &rfc\n  accepter: telnet(rfc2217),tcp,127.0.0.1,{ports['rfc2217']}\n"
        f"  connector: serialdev,{device},115200n81,local\n"
    )
    proc = subprocess.Popen(
        [binary, "-n", "-d", "-c", str(cfg), "-P", str(tmp / "ser2net.pid")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        for port in ports.values():
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    assert proc.poll() is None, "ser2net exited at start"
                    assert time.monotonic() < deadline, "ser2net did not listen"
                    time.sleep(0.05)
        time.sleep(0.1)  # the probe connections above are closed on ser2net's side too
        yield ports
    finally:
        proc.kill()  # ser2net lingers on SIGTERM with clients gone; it keeps no state
        proc.wait()
