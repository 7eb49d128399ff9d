"""The console reader's own process: it waits on the console, stamps and reads, alone,
at real-time priority where the host permits (a reader woken late stamps late;
docs/instruments.md, "The console reader"). Standard library only.

Protocol. argv[1]: the console's descriptor, inherited. stdin, a byte per command:
`s` start reading (a boot), `e` end it; end of file: exit. stdout, frames of a kind
byte, a 4-byte little-endian length and the payload:

- `R` ready (once): JSON {"scheduling", "priority", "realtime_error"};
- `C` a read: its 8-byte little-endian stamp (ns), then its bytes;
- `X` the console failed (the message); reading stops until the next `s`;
- `S` after `e`: the boot's self-check, JSON (ReaderCheck.summary()).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import struct
import sys
import time
import tty

from rig.instruments.reader_check import PROBE_S, ReaderCheck

#: SCHED_FIFO priority: above every normal process, below the kernel's threaded IRQs
#: (50), so the reader never holds up the USB stack that feeds it.
RT_PRIORITY = 10
#: A read takes what is waiting, up to this much.
READ_MAX = 65536
#: The pipe to the rig: room for seconds of console, so a slow rig never blocks a read.
PIPE_BYTES = 1 << 20
CTL, OUT = 0, 1


def realtime(priority: int = RT_PRIORITY) -> tuple[bool, str | None]:
    """Run the calling thread at SCHED_FIFO; (False, why) when the host does not permit it."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as e:
        return False, getattr(e, "strerror", None) or str(e)
    return True, None


def send(kind: bytes, payload: bytes) -> None:
    view = memoryview(kind + struct.pack("<I", len(payload)) + payload)
    while view:
        view = view[os.write(OUT, view) :]


def read_boot(fd: int, check: ReaderCheck) -> None:
    """Reads `fd` until a command arrives; every wake is a tick of the self-check."""
    probe_w, probe_r = os.openpty()
    try:
        tty.setraw(probe_r)
        os.set_blocking(probe_w, False)
        _loop(fd, probe_w, probe_r, check)
    finally:
        os.close(probe_w)
        os.close(probe_r)


def _loop(fd: int, probe_w: int, probe_r: int, check: ReaderCheck) -> None:
    probe_ns = round(PROBE_S * 1e9)
    prev = tick = time.monotonic_ns()
    failed = False
    while True:
        watch = [probe_r, CTL] if failed else [fd, probe_r, CTL]  # a failed fd stays ready
        wait = max(0, tick - time.monotonic_ns()) / 1e9
        ready, _, _ = select.select(watch, [], [], wait)
        t = time.monotonic_ns()  # the stamp: nothing runs between the wait and it
        if probe_r in ready:
            for _ in os.read(probe_r, READ_MAX):
                check.probe_seen.append(t)
        if fd in ready:
            try:
                data = os.read(fd, READ_MAX)
            except BlockingIOError:  # gone before we looked (another reader)
                data = None
            except OSError as e:
                send(b"X", str(e).encode())
                failed = True
                data = None
            if data == b"":
                send(b"X", b"the port reports data but gives none (disconnected?)")
                failed = True
            elif data:
                send(b"C", struct.pack("<q", t) + data)
                check.reads.append((t, prev))
        if CTL in ready:
            return
        if t >= tick:
            check.ticks.append((tick, t))
            tick = t + probe_ns
            # A probe nobody reads (the reader gone late for long) fills the pty.
            with contextlib.suppress(BlockingIOError):
                os.write(probe_w, b"p")
                check.probe_w.append(time.monotonic_ns())
        prev = t


def main(argv: list[str]) -> int:
    fd = int(argv[1])
    with contextlib.suppress(OSError):  # a larger pipe where the host allows it
        fcntl.fcntl(OUT, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    ok, why = realtime()
    scheduling, priority = ("SCHED_FIFO", RT_PRIORITY) if ok else ("SCHED_OTHER", 0)
    info = {"scheduling": scheduling, "priority": priority, "realtime_error": why}
    send(b"R", json.dumps(info).encode())
    while (cmd := os.read(CTL, 1)) == b"s":
        check = ReaderCheck(scheduling, priority, why)
        read_boot(fd, check)
        if os.read(CTL, 1) != b"e":
            return 0  # the rig is gone
        check.stopped_ns = time.monotonic_ns()
        send(b"S", json.dumps(check.summary()).encode())
    return 0 if cmd in (b"", b"e") else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
