"""A minimal synchronous QMP client (JSON over a Unix socket): commands, and the events
between them (RESUME stamps the vCPUs' start: the emulated board's power edge)."""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.errors import InstrumentError


@dataclass(frozen=True)
class QmpEvent:
    name: str
    wall_us: int  # QEMU's timestamp: microseconds since the Unix epoch (g_get_real_time)
    data: dict[str, Any]


class QmpClient:
    def __init__(self, path: Path, timeout_s: float = 10.0) -> None:
        self.path = path
        self.events: list[QmpEvent] = []
        self._buf = b""
        deadline = time.monotonic() + timeout_s
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        while True:
            try:
                sock.connect(str(path))
                break
            except (FileNotFoundError, ConnectionRefusedError) as e:
                if time.monotonic() > deadline:
                    sock.close()
                    raise InstrumentError(f"qemu: QMP socket {path} did not open: {e}") from None
                time.sleep(0.01)
        sock.settimeout(timeout_s)
        self._sock = sock
        greeting = self._read()
        if "QMP" not in greeting:
            raise InstrumentError(f"qemu: QMP socket {path}: unexpected greeting {greeting!r}")
        self.execute("qmp_capabilities")

    def _read(self) -> dict[str, Any]:
        while b"\n" not in self._buf:
            try:
                data = self._sock.recv(65536)
            except OSError as e:
                raise InstrumentError(f"qemu: QMP socket {self.path}: {e}") from None
            if not data:
                raise InstrumentError(f"qemu: QMP socket {self.path} closed")
            self._buf += data
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InstrumentError(f"qemu: QMP sent invalid JSON {line[:200]!r}: {e}") from None
        if not isinstance(obj, dict):
            raise InstrumentError(f"qemu: QMP sent {obj!r}")
        return obj

    def execute(self, command: str, **arguments: Any) -> Any:
        msg: dict[str, Any] = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        try:
            self._sock.sendall(json.dumps(msg).encode() + b"\n")
        except OSError as e:
            raise InstrumentError(f"qemu: QMP {command}: {e}") from None
        while True:
            obj = self._read()
            if "event" in obj:
                ts = obj.get("timestamp", {})
                wall = int(ts.get("seconds", 0)) * 1_000_000 + int(ts.get("microseconds", 0))
                self.events.append(QmpEvent(str(obj["event"]), wall, obj.get("data", {})))
                continue
            if "error" in obj:
                err = obj["error"]
                raise InstrumentError(f"qemu: QMP {command}: {err.get('desc', err)}")
            return obj.get("return")

    def event(self, name: str) -> QmpEvent | None:
        """The last event of this name seen so far."""
        return next((e for e in reversed(self.events) if e.name == name), None)

    def close(self) -> None:
        self._sock.close()
