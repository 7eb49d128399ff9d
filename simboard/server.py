"""JSON-lines control socket (Unix stream): one request per line, one response per line."""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def _respond(handle: Handler, line: bytes) -> dict[str, Any]:
    try:
        req = json.loads(line)
    except ValueError as e:
        return {"ok": False, "error": f"request is not JSON: {e}"}
    if not isinstance(req, dict) or not isinstance(req.get("cmd"), str):
        return {"ok": False, "error": 'expected a JSON object with a "cmd" string'}
    try:
        return handle(req)
    except Exception as e:  # one bad request must not take the board down
        return {"ok": False, "error": f"{req['cmd']}: {type(e).__name__}: {e}"}


class ControlServer:
    def __init__(self, path: Path, handle: Handler) -> None:
        self.path = Path(path)
        self._handle = handle
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(self.path))
        self._sock.listen(8)
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._accept, name="control", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            ready, _, _ = select.select([self._sock, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            conn, _ = self._sock.accept()
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            for line in reader:
                if not line.strip():
                    continue
                resp = _respond(self._handle, line)
                try:
                    conn.sendall(json.dumps(resp).encode() + b"\n")
                except OSError:
                    return

    def close(self) -> None:
        os.write(self._stop_w, b"x")
        self._thread.join(timeout=2)
        self._sock.close()
        for fd in (self._stop_r, self._stop_w):
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
