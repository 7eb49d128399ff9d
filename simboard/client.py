"""Start a simulated board as a child process and talk to its control socket.

`SimProcess` is what the rig (and the tests) use: it starts `rig sim serve`, waits for
the one-line JSON ready message and always terminates its own child, by PID, on close.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from rig.errors import InstrumentError
from rig.instruments.children import stop_child

#: `-m simboard` runs the same click group as `rig sim`, importing only the simulator.
SERVE = ("-m", "simboard", "serve")


class SimControl:
    """Client of the JSON-lines control socket; one connection per request."""

    def __init__(self, path: str | Path, timeout: float = 60.0) -> None:
        self.path = str(path)
        self.timeout = timeout

    def request(self, req: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request, return the response as is (`ok` may be false)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(self.timeout)
            s.connect(self.path)
            s.sendall(json.dumps(dict(req)).encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                part = s.recv(65536)
                if not part:
                    raise InstrumentError(
                        f"sim control {self.path}: connection closed mid-response"
                    )
                buf += part
        return json.loads(buf)

    __call__ = request

    def call(self, req: Mapping[str, Any]) -> dict[str, Any]:
        """Like `request`, but raises InstrumentError when the response is not ok."""
        resp = self.request(req)
        if not resp.get("ok"):
            raise InstrumentError(f"sim {req.get('cmd')}: {resp.get('error')}")
        return resp

    def status(self) -> dict[str, Any]:
        return self.call({"cmd": "status"})

    def arm(self, wiring: Mapping[str, int], samplerate: int = 1_000_000) -> int:
        return int(
            self.call({"cmd": "arm", "samplerate": samplerate, "wiring": dict(wiring)})["armed_ns"]
        )

    def stop(self, raw: Path | None = None, truth: Path | None = None) -> dict[str, Any]:
        req: dict[str, Any] = {"cmd": "stop"}
        if raw is not None:
            req["raw"] = str(Path(raw).resolve())
        if truth is not None:
            req["truth"] = str(Path(truth).resolve())
        return self.call(req)

    def shutdown(self) -> None:
        self.call({"cmd": "shutdown"})


def _options(options: Mapping[str, Any]) -> list[str]:
    """{"usb_latency_ms": 1.0, "nominal": True} -> ["--usb-latency-ms", "1", "--nominal"]."""
    args: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            args += [flag] if value else []
        elif isinstance(value, float) and value.is_integer():
            args += [flag, str(int(value))]
        else:
            args += [flag, str(value)]
    return args


class SimProcess:
    """`with SimProcess(profile, seed=1) as sim:` -> sim.relay, sim.console, sim.control."""

    def __init__(
        self,
        profile: str | Path,
        *,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
        state_dir: str | Path | None = None,
        timeout: float = 20.0,
    ) -> None:
        self.args = [sys.executable, *SERVE, str(profile), "--json"]  # errors as JSON too
        # A rig killed with SIGKILL cannot stop its board: the board notices and exits.
        self.args.append("--exit-with-parent")
        if seed is not None:
            self.args += ["--seed", str(seed)]
        if state_dir is not None:
            self.args += ["--state-dir", str(state_dir)]
        self.args += _options(options or {})
        self.timeout = timeout
        self.info: dict[str, Any] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid: int | None = None
        self._stderr: IO[bytes] | None = None

    # What the ready line told us.
    @property
    def pid(self) -> int:
        assert self._pid is not None, "SimProcess not started"
        return self._pid

    @property
    def relay(self) -> str:
        return str(self.info["relay"])

    @property
    def relay_numato(self) -> str:
        """The same relay behind a Numato-style ASCII protocol."""
        return str(self.info["relay_numato"])

    @property
    def pdu(self) -> str:
        """The same relay behind a network PDU's REST interface (`http://127.0.0.1:N`)."""
        return str(self.info["pdu"])

    @property
    def console(self) -> str:
        return str(self.info["console"])

    @property
    def supply(self) -> str:
        """The SCPI bench supply's VISA resource (TCPIP::127.0.0.1::PORT::SOCKET)."""
        return str(self.info["supply"])

    @property
    def supply_serial(self) -> str:
        """The same supply on a pty, as a VISA resource (ASRL/dev/pts/N::INSTR)."""
        return str(self.info["supply_serial"])

    @property
    def control_path(self) -> str:
        return str(self.info["control"])

    @property
    def client(self) -> SimControl:
        return SimControl(self.control_path)

    def control(self, req: Mapping[str, Any]) -> dict[str, Any]:
        return self.client.request(req)

    def start(self) -> SimProcess:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the child
        self._proc = subprocess.Popen(
            self.args, stdout=subprocess.PIPE, stderr=self._stderr, stdin=subprocess.DEVNULL
        )
        self._pid = self._proc.pid
        try:
            self.info = self._ready_line()
        except BaseException:
            self.close()
            raise
        return self

    def _ready_line(self) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        buf = b""
        while True:
            if b"\n" in buf:
                try:
                    return self._parse(json.loads(buf.split(b"\n", 1)[0]))
                except ValueError:
                    pass  # not one line: a (pretty-printed) error object follows
            left = deadline - time.monotonic()
            if left <= 0:
                raise InstrumentError(
                    f"simulator gave no ready line within {self.timeout} s{self._stderr_tail()}"
                )
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            part = os.read(fd, 4096)
            if part:
                buf += part
                continue
            code = self._proc.wait(timeout=5)
            with contextlib.suppress(ValueError):  # a JSON error object beats a bare status
                self._parse(json.loads(buf))
            tail = self._stderr_tail()
            raise InstrumentError(f"simulator exited with status {code} before ready{tail}")

    @staticmethod
    def _parse(info: Any) -> dict[str, Any]:
        if not isinstance(info, dict):
            raise InstrumentError(f"simulator ready line is not a JSON object: {info!r}")
        if "error" in info:  # `serve --json` reports a failed start on stdout
            raise InstrumentError(f"simulator failed to start: {info['error']}")
        return info

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read()[-2000:].decode(errors="replace").strip()
        return f":\n{text}" if text else ""

    def close(self) -> None:
        """Terminate our own child (SIGTERM, then SIGKILL) and release the pipes."""
        proc, self._proc = self._proc, None
        if proc is not None:
            stop_child(proc, 5)
            if proc.stdout is not None:
                proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> SimProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
