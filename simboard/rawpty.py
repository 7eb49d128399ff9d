"""A raw pseudo-terminal pair standing in for a USB-serial device node."""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
import tty


class RawPty:
    """`path` is what clients open (like /dev/ttyUSB0); the simulator uses `master`.

    We keep a slave fd open ourselves: without it the master sees EIO (and loses data)
    whenever the last client closes the port, which a real device node never does.
    """

    def __init__(self, nonblocking_master: bool = False) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # all 8 bits through, no echo, no CR/LF translation
        os.set_blocking(self.master, not nonblocking_master)
        self.path = os.ttyname(self.slave)

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


class PtyDevice:
    """A simulated device on a RawPty: a thread hands each read from the master, with the
    host time it arrived, to `received`. Subclasses set up their state, then call
    `_start()`; `close()` stops the thread and the pty."""

    thread_name = "pty-device"

    def __init__(self, nonblocking_master: bool = False) -> None:
        self.pty = RawPty(nonblocking_master)
        self.path = self.pty.path
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._loop, name=self.thread_name, daemon=True)
        self.closed = False

    def _start(self) -> None:
        self._thread.start()

    def received(self, data: bytes, t_ns: int) -> None:
        raise NotImplementedError

    def _loop(self) -> None:
        master = self.pty.master
        while True:
            ready, _, _ = select.select([master, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            try:
                data = os.read(master, 4096)
            except BlockingIOError:
                continue
            except OSError:
                return
            self.received(data, time.monotonic_ns())

    def close(self) -> None:
        """Stop the thread and close the pty; once (a port can vanish before shutdown)."""
        if self.closed:
            return
        self.closed = True
        os.write(self._stop_w, b"x")
        self._thread.join(timeout=2)
        for fd in (self._stop_r, self._stop_w):
            os.close(fd)
        self.pty.close()
