"""The board's serial console on a pseudo-terminal, delivered like a USB-serial adapter.

The board model decides when each USB transfer reaches the host (rig.sim.usbserial);
a writer thread puts each one on the pty master at that host CLOCK_MONOTONIC time. If
nobody reads, the pty fills and bytes are dropped and counted, like a real UART: the
simulator never blocks on its console.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
import time
from pathlib import Path

from rig.sim.rawpty import RawPty
from rig.sim.usbserial import Transfer

#: Sleep until this close to a transfer's time, then spin (2 cores: keep the spin short).
_SPIN_NS = 200_000


#: Sequence number of a boot's hangup entry: after all of its transfers at the same time.
_HANGUP_SEQ = 1 << 62


class ConsolePort:
    """`link`: publish the port as a symlink (like udev's /dev/serial/by-id names), so a
    client can reopen it by the same path after a hangup replaced the pty behind it."""

    def __init__(self, link: Path | None = None) -> None:
        self.pty = RawPty(nonblocking_master=True)
        self.link = link
        if link is not None:
            _point(link, self.pty.path)
        self.path = str(link) if link is not None else self.pty.path
        self.sent = 0
        self.dropped = 0
        self.hangups = 0
        self.late_max_ns = 0  # worst delivery lateness seen (scheduling, not the model)
        # (t_ns, boot, seq, data); data None is a hangup (the adapter vanishes)
        self._pending: list[tuple[int, int, int, bytes | None]] = []
        self._written: dict[int, int] = {}  # boot -> transfers already written
        self._hung: set[int] = set()  # boots whose hangup already happened
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="console", daemon=True)
        self._thread.start()

    def submit(self, boot: int, plan: list[Transfer]) -> None:
        """(Re)schedule a boot's transfers; the ones already written stay written.

        The model is causal, so a re-plan (power cut) agrees with the old one up to now.
        """
        with self._cond:
            done = self._written.setdefault(boot, 0)
            self._pending = [p for p in self._pending if p[1] != boot]
            for seq, (t_ns, data) in enumerate(plan[done:], start=done):
                bisect.insort(self._pending, (t_ns, boot, seq, data))
            self._cond.notify()

    def hangup_at(self, boot: int, t_ns: int) -> None:
        """Close the pty at host time `t_ns` (once per boot); a new one replaces it."""
        with self._cond:
            if boot in self._hung:
                return
            bisect.insort(self._pending, (t_ns, boot, _HANGUP_SEQ, None))
            self._cond.notify()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._stopping and not self._pending:
                    self._cond.wait()
                if self._stopping:
                    return
                head = self._pending[0]
                wait_ns = head[0] - time.monotonic_ns()
                if wait_ns > _SPIN_NS:
                    self._cond.wait((wait_ns - _SPIN_NS) / 1e9)
                    continue  # re-check: the schedule may have changed meanwhile
            while time.monotonic_ns() < head[0]:
                pass
            with self._cond:
                if not self._pending or self._pending[0] is not head:
                    continue
                self._pending.pop(0)
                if head[3] is None:
                    self._hung.add(head[1])
                    self._replace_pty()
                    continue
                self._written[head[1]] = head[2] + 1
                self._write(head[0], head[3])

    def _replace_pty(self) -> None:
        """The adapter is unplugged and re-enumerates: clients holding the old pty get an
        error (EIO) and must reopen the port, which now leads to a fresh pty."""
        old, self.pty = self.pty, RawPty(nonblocking_master=True)
        if self.link is not None:
            _point(self.link, self.pty.path)
        else:
            self.path = self.pty.path
        old.close()
        self.hangups += 1

    def _write(self, t_ns: int, data: bytes) -> None:
        try:
            n = os.write(self.pty.master, data)
        except OSError:  # EAGAIN: nobody reads and the pty is full
            n = 0
        self.late_max_ns = max(self.late_max_ns, time.monotonic_ns() - t_ns)
        self.sent += n
        self.dropped += len(data) - n

    def close(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(timeout=2)
        self.pty.close()
        if self.link is not None:
            with contextlib.suppress(FileNotFoundError):
                self.link.unlink()


def _point(link: Path, target: str) -> None:
    """Re-point `link` atomically: a client opening it sees the old or the new pty."""
    tmp = link.with_name(link.name + ".new")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, link)
