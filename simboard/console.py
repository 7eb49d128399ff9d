"""The board's serial console on a pseudo-terminal, delivered like a USB-serial adapter.

The board model decides when each USB transfer reaches the host (simboard.usbserial);
a writer thread puts each one on the pty master at that host CLOCK_MONOTONIC time. If
nobody reads, the pty fills and bytes are dropped and counted, like a real UART: the
simulator never blocks on its console.

The writer is a process on a shared host, so the scheduler can delay it: it runs at
real-time priority where permitted, and every transfer's actual write time is kept
(`deliveries`) for the ground truth, which must say when the bytes really reached the
host, not only when the model wanted them there.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from simboard.rawpty import RawPty
from simboard.usbserial import Transfer

#: Sleep until this close to a transfer's time, then spin (2 cores: keep the spin short).
#: At real-time priority the sleep itself wakes on time, and a spin there would starve
#: the host (several simulated boards at once): no spin.
_SPIN_NS = 200_000


#: Sequence number of a boot's hangup entry: after all of its transfers at the same time.
_HANGUP_SEQ = 1 << 62
#: SCHED_FIFO priority of the writer: an adapter is hardware, no scheduler delays it.
_RT_PRIORITY = 50


@dataclass(frozen=True)
class Delivery:
    """One USB transfer as it reached the host: bytes [offset, offset + sent) of a boot's
    console stream, due at `due_ns` (the adapter model), written at `written_ns` (after
    the write returned: the bytes were readable by then)."""

    offset: int
    size: int
    sent: int  # bytes the pty took (fewer when nobody read and it was full)
    due_ns: int
    written_ns: int


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
        self.realtime = False  # the writer obtained real-time priority
        # (t_ns, boot, seq, data, offset); data None is a hangup (the adapter vanishes)
        self._pending: list[tuple[int, int, int, bytes | None, int]] = []
        self._written: dict[int, int] = {}  # boot -> transfers already written
        self._deliveries: dict[int, list[Delivery]] = {}  # boot -> its writes so far
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
            offset = sum(len(d) for _, d in plan[:done])
            for seq, (t_ns, data) in enumerate(plan[done:], start=done):
                bisect.insort(self._pending, (t_ns, boot, seq, data, offset))
                offset += len(data)
            self._cond.notify()

    def deliveries(self, boot: int) -> list[Delivery]:
        """The transfers of `boot` written so far, in stream order."""
        with self._cond:
            return list(self._deliveries.get(boot, ()))

    def forget(self, keep: set[int]) -> None:
        """Drop the deliveries of boots not in `keep` (the board forgot them)."""
        with self._cond:
            for boot in [b for b in self._deliveries if b not in keep]:
                del self._deliveries[boot]

    def hangup_at(self, boot: int, t_ns: int) -> None:
        """Close the pty at host time `t_ns` (once per boot); a new one replaces it."""
        with self._cond:
            if boot in self._hung:
                return
            bisect.insort(self._pending, (t_ns, boot, _HANGUP_SEQ, None, 0))
            self._cond.notify()

    def _loop(self) -> None:
        self.realtime = _realtime()
        spin_ns = 0 if self.realtime else _SPIN_NS
        while True:
            with self._cond:
                while not self._stopping and not self._pending:
                    self._cond.wait()
                if self._stopping:
                    return
                head = self._pending[0]
                wait_ns = head[0] - time.monotonic_ns()
                if wait_ns > spin_ns:
                    self._cond.wait((wait_ns - spin_ns) / 1e9)
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
                sent, written_ns = self._write(head[0], head[3])
                self._deliveries.setdefault(head[1], []).append(
                    Delivery(head[4], len(head[3]), sent, head[0], written_ns)
                )

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

    def _write(self, t_ns: int, data: bytes) -> tuple[int, int]:
        """Bytes the pty took and the host time they were readable by."""
        try:
            n = os.write(self.pty.master, data)
        except OSError:  # EAGAIN: nobody reads and the pty is full
            n = 0
        written_ns = time.monotonic_ns()
        self.late_max_ns = max(self.late_max_ns, written_ns - t_ns)
        self.sent += n
        self.dropped += len(data) - n
        return n, written_ns

    def close(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(timeout=2)
        self.pty.close()
        if self.link is not None:
            with contextlib.suppress(FileNotFoundError):
                self.link.unlink()


def _realtime() -> bool:
    """Run the calling thread at SCHED_FIFO if the host permits (root, CAP_SYS_NICE or
    an rtprio limit); False leaves it at normal priority."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(_RT_PRIORITY))
    except (OSError, AttributeError):  # EPERM, or a platform without it
        return False
    return True


def _point(link: Path, target: str) -> None:
    """Re-point `link` atomically: a client opening it sees the old or the new pty."""
    tmp = link.with_name(link.name + ".new")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, link)
