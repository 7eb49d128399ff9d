"""The rig's side of the console reader: a port with a descriptor (a device, socket://)
is read by a process of its own (reader_proc.py), kept across boots; one without
(rfc2217://) by a thread, through pyserial's timeout (no bound). Reads go on a queue as
Chunks, then None; `stop()` leaves `summary` (run.json `console_reader`) and `error`."""

from __future__ import annotations

import contextlib
import json
import queue
import struct
import subprocess
import sys
import threading
import time
from typing import IO, Any

import serial

from rig.errors import InstrumentError
from rig.instruments.children import stop_child
from rig.instruments.reader_check import ReaderCheck
from rig.instruments.reader_proc import RT_PRIORITY, realtime
from rig.model import Chunk

#: The reader process says it is ready within this (a loaded host starts Python slowly).
START_S = 20.0

Reads = queue.SimpleQueue[Chunk | None]


def wait_fd(ser: serial.SerialBase) -> int | None:
    """The descriptor a reader can wait on; None for rfc2217:// (pyserial's own thread)."""
    try:
        return int(ser.fileno())
    except (AttributeError, OSError, ValueError, serial.SerialException):
        return None


class ProcReader:
    """The reader process of one open port."""

    def __init__(self, fd: int, port: str) -> None:
        self.port = port
        self.summary: dict[str, Any] | None = None
        self.error: str | None = None
        self._pump: threading.Thread | None = None
        self.info: dict[str, Any] | None = None
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "rig.instruments.reader_proc", str(fd)],
            pass_fds=(fd,),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._ctl: IO[bytes] = self._proc.stdin
        self._frames: IO[bytes] = self._proc.stdout
        ready = threading.Thread(target=self._ready, daemon=True)
        ready.start()
        ready.join(START_S)
        if self.info is None:
            self.close()
            raise InstrumentError(f"console {port}: its reader process did not start")

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _ready(self) -> None:
        frame = self._frame()
        if frame is not None and frame[0] == b"R":
            self.info = json.loads(frame[1])

    def _frame(self) -> tuple[bytes, bytes] | None:
        head = self._frames.read(5)
        if len(head) < 5:
            return None  # the process is gone
        (n,) = struct.unpack("<I", head[1:])
        return head[:1], self._frames.read(n)

    def start(self, out: Reads) -> None:
        self.summary, self.error = None, None
        self._send(b"s")
        self._pump = threading.Thread(target=self._run, args=(out,), name="console", daemon=True)
        self._pump.start()

    def _run(self, out: Reads) -> None:
        """Chunks onto `out` until the boot's self-check arrives, then None."""
        try:
            while (frame := self._frame()) is not None:
                kind, payload = frame
                if kind == b"C":
                    (t_ns,) = struct.unpack("<q", payload[:8])
                    out.put(Chunk(t_ns, payload[8:]))
                elif kind == b"X":
                    self.error = payload.decode(errors="replace")
                elif kind == b"S":
                    self.summary = json.loads(payload)
                    return
            self.error = self.error or "its reader process ended"
        finally:
            out.put(None)

    def stop(self) -> None:
        self._send(b"e")
        if self._pump is not None:
            self._pump.join(timeout=5)
            if self._pump.is_alive():  # the process hangs: nothing more comes from it
                self.close()
                self._pump.join(timeout=5)
            self._pump = None

    def _send(self, cmd: bytes) -> None:
        try:
            self._ctl.write(cmd)
            self._ctl.flush()
        except (BrokenPipeError, ValueError):
            self.error = self.error or "its reader process ended"

    def close(self) -> None:
        """Ends the process (end of file on its commands), by its PID if it lingers."""
        with contextlib.suppress(OSError):  # a broken pipe: it is gone already
            self._ctl.close()
        stop_child(self._proc, 5, first=None)
        self._frames.close()


class ThreadReader:
    """Reads through pyserial (its timeout set at open) in a thread of the rig."""

    def __init__(self, ser: serial.SerialBase, port: str) -> None:
        self._ser = ser
        self.port = port
        self.summary: dict[str, Any] | None = None
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, out: Reads) -> None:
        self.summary, self.error = None, None
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(out,), name="console", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        cancel = getattr(self._ser, "cancel_read", None)
        if cancel is not None:
            cancel()  # wake a read blocked in pyserial's own wait
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self, out: Reads) -> None:
        ok, why = realtime()
        check = ReaderCheck(
            *(("SCHED_FIFO", RT_PRIORITY) if ok else ("SCHED_OTHER", 0)), why, "pyserial"
        )
        ser, timeout_ns = self._ser, round((self._ser.timeout or 0) * 1e9)
        try:
            while not self._stop.is_set():
                t0 = time.monotonic_ns()
                first = ser.read(1)
                t = time.monotonic_ns()
                if not first:  # the timeout expired: how late it came back is a tick
                    check.ticks.append((min(t, t0 + timeout_ns), t))
                    continue
                rest = ser.read(ser.in_waiting) if ser.in_waiting else b""
                out.put(Chunk(t, first + rest))
        except (serial.SerialException, OSError) as e:
            self.error = str(e)
        finally:
            check.stopped_ns = time.monotonic_ns()
            self.summary = check.summary()
            out.put(None)

    def close(self) -> None:
        self.stop()
