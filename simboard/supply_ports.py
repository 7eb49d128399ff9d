"""The supply's two ports: a raw TCP socket on 127.0.0.1 (`TCPIP::...::SOCKET`, as LAN
supplies serve SCPI on port 5025) and a pty (`ASRL...::INSTR`, its USB-serial port).

Both are line-terminated (`\\n`, a `\\r` before it is ignored); a line's host arrival
time is taken when the read that completed it returned.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable

from simboard.rawpty import PtyDevice
from simboard.supply import Supply

#: A line longer than this is not SCPI: it is dropped (and the session goes on).
MAX_LINE = 4096


class _Lines:
    """Splits a byte stream into lines and answers each through the supply."""

    def __init__(self, supply: Supply, send: Callable[[bytes], None]) -> None:
        self.supply = supply
        self.send = send
        self.buf = b""

    def feed(self, data: bytes, t_ns: int) -> None:
        self.buf += data
        while b"\n" in self.buf:
            raw, self.buf = self.buf.split(b"\n", 1)
            line = raw.rstrip(b"\r").decode("ascii", "replace")
            try:
                answer = self.supply.handle(line, t_ns) if line.strip() else None
            except Exception:  # a model bug must not take the port down
                traceback.print_exc(file=sys.stderr)
                continue
            if answer is not None:
                self.send(answer.encode("ascii") + b"\n")
        if len(self.buf) > MAX_LINE:
            self.buf = b""


class TcpPort:
    """`host`, `port`: where the supply listens (port 0: a free one, reported)."""

    def __init__(self, supply: Supply, host: str = "127.0.0.1", port: int = 0) -> None:
        self.supply = supply
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self._sock.listen(4)
        self.host, self.port = self._sock.getsockname()[:2]
        self._stop_r, self._stop_w = os.pipe()
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, name="supply-tcp", daemon=True)
        self._thread.start()

    @property
    def resource(self) -> str:
        return f"TCPIP::{self.host}::{self.port}::SOCKET"

    def _accept(self) -> None:
        while True:
            ready, _, _ = select.select([self._sock, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # answers go at once
            with self._lock:
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        lines = _Lines(self.supply, conn.sendall)
        try:
            while True:
                ready, _, _ = select.select([conn, self._stop_r], [], [])
                if self._stop_r in ready:
                    return
                data = conn.recv(4096)
                if not data:
                    return
                lines.feed(data, time.monotonic_ns())
        except OSError:
            return  # the client went away mid-answer
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def close(self) -> None:
        os.write(self._stop_w, b"x")
        self._thread.join(timeout=2)
        self._sock.close()
        with self._lock:
            for c in list(self._conns):
                with contextlib.suppress(OSError):
                    c.shutdown(socket.SHUT_RDWR)
        for fd in (self._stop_r, self._stop_w):
            os.close(fd)


class PtyPort(PtyDevice):
    """The supply's serial port on a pseudo-terminal (any baud rate works)."""

    thread_name = "supply-pty"

    def __init__(self, supply: Supply) -> None:
        super().__init__(nonblocking_master=True)  # an unread answer never blocks us
        self._lines = _Lines(supply, self._send)
        self._start()

    @property
    def resource(self) -> str:
        return f"ASRL{self.path}::INSTR"

    def _send(self, data: bytes) -> None:
        with contextlib.suppress(OSError):  # nobody reads: the answer is lost, as on a wire
            os.write(self.pty.master, data)

    def received(self, data: bytes, t_ns: int) -> None:
        self._lines.feed(data, t_ns)
