"""Power through a labgrid place, switched by labgrid's own driver in `labgrid_bridge.py`,
run by labgrid's own Python (docs/instruments.md, "labgrid") over a pipe: it holds the
place for the run and stamps CLOCK_MONOTONIC right before the switch."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from rig.config.target import TargetConfig, labgrid_place
from rig.config.tomlcheck import Table
from rig.errors import InstrumentError
from rig.instruments.children import file_tail, stop_child
from rig.instruments.place import PlaceInfo
from rig.instruments.protocols import SwitchedPower
from rig.instruments.registry import POWER, BenchContext

BRIDGE = Path(__file__).with_name("labgrid_bridge.py")
#: `make labgrid`'s environment, next to this checkout's rig/ package.
LOCAL_CLIENT = Path(__file__).resolve().parents[2] / ".venv-labgrid" / "bin" / "labgrid-client"
#: labgrid's own default when neither the config nor LG_COORDINATOR names one.
DEFAULT_COORDINATOR = "127.0.0.1:20408"
#: An answer longer than this is not the bridge's.
MAX_ANSWER = 1 << 20


def labgrid_python(configured: str | None) -> str:
    """labgrid's interpreter: configured, else the `#!` of `labgrid-client` on PATH or
    of the checkout's `.venv-labgrid` (`make labgrid`)."""
    if configured:
        return configured
    client = shutil.which("labgrid-client") or (
        str(LOCAL_CLIENT) if LOCAL_CLIENT.is_file() else None
    )
    if client:
        with contextlib.suppress(OSError), open(client, "rb") as f:
            first = f.readline(4096)
            if first.startswith(b"#!"):
                return first[2:].decode(errors="replace").split()[0]
    raise InstrumentError(
        "power labgrid: labgrid not found: no labgrid-client on PATH; set [power] python "
        "(or [target] python) to the Python of labgrid's environment (`make labgrid` "
        "makes .venv-labgrid)"
    )


@POWER.register("labgrid")
class LabgridPower(SwitchedPower):
    @classmethod
    def parse(cls, t: Table, base: Path) -> TargetConfig:
        return labgrid_place(t, base, t.str("place"), "resource")

    @classmethod
    def build(cls, s: TargetConfig, bench: BenchContext) -> LabgridPower:
        power = cls(s)
        # The console and analyzer drivers open what this acquired place exports.
        bench.place = PlaceInfo(power.identity, power.coordinator)
        return power

    def __init__(self, s: TargetConfig) -> None:
        self.place, self.timeout_s = s.place, s.timeout_s
        self.coordinator = s.coordinator or os.environ.get("LG_COORDINATOR") or DEFAULT_COORDINATOR
        self.what = f"labgrid place {s.place!r} (coordinator {self.coordinator})"
        exe = self.python = labgrid_python(s.python)
        argv = [exe, "-I", str(BRIDGE), "--coordinator", self.coordinator, "--place", s.place,
                "--parent", str(os.getpid())]  # fmt: skip
        if s.power_resource:
            argv += ["--resource", s.power_resource]
        # Lives as long as the bridge; closed in _end().
        self._log: IO[bytes] = tempfile.TemporaryFile(prefix="bootrig-labgrid-")  # noqa: SIM115
        self._buf = b""
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log
            )
        except OSError as e:
            self._log.close()
            raise InstrumentError(f"power labgrid: cannot run {exe}: {e}") from None
        try:
            self.identity = self._answer("connect and acquire")
        except InstrumentError:
            self._end()
            raise

    def _stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            tail = file_tail(self._log, 600).decode(errors="replace").strip()
            return f"; labgrid said: {tail}" if tail else ""
        return ""

    def _answer(self, doing: str) -> dict[str, Any]:
        """The bridge's next line, within the timeout; its error as an InstrumentError."""
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout_s
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise InstrumentError(
                    f"{self.what}: no answer within {self.timeout_s:g} s to {doing}"
                    f"{self._stderr_tail()}"
                )
            chunk = os.read(fd, 65536)
            if not chunk or len(self._buf) > MAX_ANSWER:
                self._proc.wait(timeout=self.timeout_s)
                raise InstrumentError(
                    f"{self.what}: the labgrid bridge ended ({self._proc.returncode}) "
                    f"during {doing}{self._stderr_tail()}"
                )
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            got = json.loads(line)
        except ValueError:
            raise InstrumentError(f"{self.what}: unreadable answer {line[:200]!r}") from None
        if not isinstance(got, dict) or not got.get("ok"):
            err = str(got.get("error") if isinstance(got, dict) else got)
            if "No module named 'labgrid'" in err:
                err += f" ({self.python} is not the Python of labgrid's environment)"
            raise InstrumentError(f"{self.what}: {doing}: {err}")
        return got

    def _command(self, cmd: str) -> dict[str, Any]:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps({"cmd": cmd}).encode() + b"\n")
            self._proc.stdin.flush()
        except OSError:
            raise InstrumentError(
                f"{self.what}: the labgrid bridge is gone ({cmd}){self._stderr_tail()}"
            ) from None
        return self._answer(f"power {cmd}")

    def switch(self, on: bool) -> int:
        got = self._command("on" if on else "off")
        if got.get("state") is not None and bool(got["state"]) != on:
            word = "on" if on else "off"
            raise InstrumentError(f"{self.what}: power reads {not on} after switching {word}")
        return int(got["t_ns"])

    def describe(self) -> dict[str, Any]:
        return {"model": "labgrid place", "coordinator": self.coordinator,
                **{k: v for k, v in self.identity.items() if k != "ok"}}  # fmt: skip

    def _end(self) -> None:
        """Stop the bridge: it releases the place on stdin EOF or SIGTERM."""
        with contextlib.suppress(OSError, ValueError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        try:
            try:
                self._proc.wait(timeout=self.timeout_s)  # EOF: it releases and leaves
            except subprocess.TimeoutExpired:
                stop_child(self._proc, self.timeout_s)  # SIGTERM still releases
        finally:
            with contextlib.suppress(OSError, ValueError):
                if self._proc.stdout is not None:
                    self._proc.stdout.close()
            self._log.close()

    def close(self) -> None:
        """Release the place (if the rig acquired it) and end the bridge."""
        try:
            if self._proc.poll() is None:
                with contextlib.suppress(InstrumentError):  # it releases on EOF or SIGTERM too
                    self._command("release")
        finally:
            self._end()
