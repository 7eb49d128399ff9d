"""Serial ports opened exclusively (flock, pyserial's `exclusive`; the kernel drops it
when the holder dies): what a rig's claim (target_claim.py) cannot see, a terminal
program say, still cannot share a relay or console; the error names who has it open."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import serial

from rig.errors import InstrumentError


def holders(device: str) -> list[int]:
    """PIDs (other than ours) with `device` open, from /proc/*/fd."""
    try:
        target = os.path.realpath(device)
    except OSError:
        return []
    out = []
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        pid = int(fd_dir.parent.name)
        if pid == os.getpid():
            continue
        try:
            if any(os.path.realpath(fd) == target for fd in fd_dir.iterdir()):
                out.append(pid)
        except OSError:
            continue  # gone, or not ours to look at
    return sorted(out)


def cmdline(pid: int | str) -> str | None:
    """The command line of process `pid` ("self": ours), None when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return shlex.join(a.decode(errors="replace") for a in raw.split(b"\0") if a)


def open_serial(port: str, what: str, **kwargs: Any) -> serial.SerialBase:
    """`serial_for_url`, locked when `port` is a device; errors name `what` and the port."""
    try:
        ser = serial.serial_for_url(port, do_not_open=True, **kwargs)
        if isinstance(ser, serial.Serial) and "://" not in port:
            ser.exclusive = True
        ser.open()
        return ser
    except (serial.SerialException, ValueError, OSError) as e:
        if "exclusively lock" in str(e):
            # No rig on this host claims it (rig/instruments/target_claim.py names one
            # that does): say what has it open, which may also be the far end of a pty.
            pids = holders(port)
            by = ", ".join(
                f"PID {p} (`{cmd[:200]}`)" if (cmd := cmdline(p)) else f"PID {p}" for p in pids
            )
            by = by or "another process"
            raise InstrumentError(
                f"{what}: {port} is in use by {by} (what has it open; no rig on this host "
                "claims it)"
            ) from None
        raise InstrumentError(f"{what}: cannot open {port}: {e}") from None
