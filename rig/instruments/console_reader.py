"""The console's dedicated reader: one thread that only waits, stamps and reads.

A stamp is the host CLOCK_MONOTONIC time the reader saw a read's first byte; a reader
the scheduler wakes late stamps late, and nothing in the bytes says so. So the reader
does nothing else (console.jsonl is written elsewhere, from a queue), runs at real-time
priority where the host permits, takes the stamp the moment its wait returns, and
checks as it goes how late the host let it see each read (reader_check.py: ticks of
its own, and probe bytes through a pty of its own). Ports without a file descriptor to
wait on (rfc2217://) read through pyserial's own timeout, checked only when it expires.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import threading
import time
import tty

import serial

from rig.instruments.reader_check import PROBE_S, ReaderCheck
from rig.model import Chunk

#: SCHED_FIFO priority: above every normal process, below the kernel's threaded IRQs
#: (50), so the reader never holds up the USB stack that feeds it.
RT_PRIORITY = 10
#: Reads are whatever is waiting, up to this much.
READ_MAX = 65536


def wait_fd(ser: serial.SerialBase) -> int | None:
    """The descriptor the reader can wait on (a device, socket://), None for ports that
    deliver through a thread of their own (rfc2217://)."""
    try:
        return int(ser.fileno())
    except (AttributeError, OSError, ValueError, serial.SerialException):
        return None


def realtime(priority: int = RT_PRIORITY) -> tuple[bool, str | None]:
    """Run the calling thread at SCHED_FIFO; (False, why) when the host does not permit
    it (no CAP_SYS_NICE or RLIMIT_RTPRIO, a container's policy)."""
    try:
        os.sched_setscheduler(threading.get_native_id(), os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as e:
        return False, getattr(e, "strerror", None) or str(e)
    return True, None


class Reader:
    """Reads `ser` into `out` (a Chunk per read) until `stop()`, then puts None; an
    error ends it and is left in `error`. A port with a descriptor must have been
    opened with timeout 0 (a read takes what is waiting)."""

    def __init__(self, ser: serial.SerialBase, out: queue.SimpleQueue[Chunk | None]) -> None:
        self._ser = ser
        self._out = out
        self.check = ReaderCheck()
        self.error: Exception | None = None
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="console-reader", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        os.write(self._wake_w, b"x")
        cancel = getattr(self._ser, "cancel_read", None)
        if cancel is not None and self.check.waits == "pyserial":
            cancel()  # wake a read blocked in pyserial's own wait
        self._thread.join(timeout=5)
        self.check.stopped_ns = time.monotonic_ns()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        self._out.put(None)

    def _run(self) -> None:
        ok, why = realtime()
        if ok:
            self.check.scheduling, self.check.priority = "SCHED_FIFO", RT_PRIORITY
        self.check.realtime_error = why
        fd = wait_fd(self._ser)
        try:
            if fd is None:
                self.check.waits = "pyserial"
                self._loop_pyserial()
            else:
                probe_w, probe_r = os.openpty()
                try:
                    tty.setraw(probe_r)
                    os.set_blocking(probe_w, False)
                    self._loop_select(fd, probe_w, probe_r)
                finally:
                    for pfd in (probe_w, probe_r):
                        os.close(pfd)
        except (serial.SerialException, OSError) as e:
            self.error = e

    def _loop_select(self, fd: int, probe_w: int, probe_r: int) -> None:
        probe_ns = round(PROBE_S * 1e9)
        check, ser, out, wake = self.check, self._ser, self._out, self._wake_r
        prev = tick = time.monotonic_ns()
        while True:
            wait = max(0, tick - time.monotonic_ns()) / 1e9
            ready, _, _ = select.select([fd, probe_r, wake], [], [], wait)
            t = time.monotonic_ns()  # the stamp: nothing runs between the wait and it
            overdue = t - tick
            if wake in ready:
                return
            if probe_r in ready:
                for _ in os.read(probe_r, READ_MAX):
                    check.probe_seen.append(t)
            if fd in ready:
                data = ser.read(READ_MAX)  # timeout 0: what is waiting, at once
                if data:
                    out.put(Chunk(t, data))
                    check.reads.append((t, prev))
            if overdue >= 0:
                check.ticks.append((tick, t))
                tick = t + probe_ns
                # A probe no one reads (the reader gone late for long) fills the pty.
                with contextlib.suppress(BlockingIOError):
                    os.write(probe_w, b"p")
                    check.probe_w.append(time.monotonic_ns())
            prev = t

    def _loop_pyserial(self) -> None:
        ser, out = self._ser, self._out
        timeout_ns = round((ser.timeout or 0) * 1e9)
        while not self._stop.is_set():
            t0 = time.monotonic_ns()
            first = ser.read(1)
            t = time.monotonic_ns()
            if not first:  # the timeout expired: how late it came back is a tick
                self.check.ticks.append((min(t, t0 + timeout_ns), t))
                continue
            rest = ser.read(ser.in_waiting) if ser.in_waiting else b""
            out.put(Chunk(t, first + rest))
