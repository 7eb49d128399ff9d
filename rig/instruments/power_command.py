"""Power through any program (a PDU's CLI, uhubctl, a GPIO tool): argument lists, never
a shell line; a timeout; a non-zero exit is an error naming the command and its output.
The stamp is taken before the program starts: without an analyzer its start-up counts
in the bootloader stage."""

from __future__ import annotations

import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from rig.config.tomlcheck import Table
from rig.errors import InstrumentError
from rig.instruments.children import file_tail
from rig.instruments.protocols import SwitchedPower
from rig.instruments.registry import POWER, BenchContext


@dataclass(frozen=True)
class CommandSettings:
    on: tuple[str, ...]
    off: tuple[str, ...]
    timeout_s: float


def _argv(t: Table, key: str) -> tuple[str, ...]:
    v = t.raw(key)
    if not isinstance(v, list) or not v or not all(isinstance(a, str) and a for a in v):
        t.error(key, 'an argument list such as ["uhubctl", "-a", "on", "-p", "2"]', v)
    return tuple(v)


@POWER.register("command")
class CommandPower(SwitchedPower):
    @classmethod
    def parse(cls, t: Table, base: Path) -> CommandSettings:
        return CommandSettings(
            _argv(t, "on"), _argv(t, "off"), t.seconds("timeout_s", 10.0, min=0.01)
        )

    @classmethod
    def build(cls, s: CommandSettings, bench: BenchContext) -> CommandPower:
        return cls(s.on, s.off, s.timeout_s)

    def __init__(self, on: tuple[str, ...], off: tuple[str, ...], timeout_s: float = 10.0) -> None:
        self._on, self._off, self.timeout_s = on, off, timeout_s

    def switch(self, on: bool) -> int:
        argv = self._on if on else self._off
        # Files, not pipes: a child the program leaves running (`... &`) inherits them,
        # and reading pipes to their end would wait for it (or SIGPIPE it).
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t, code = self._start(argv, out, err)
            stdout, stderr = file_tail(out), file_tail(err)
        if code != 0:
            text = (stderr or stdout).decode(errors="replace").strip()[-500:]
            raise InstrumentError(f"power command {list(argv)} failed ({code}): {text}")
        return t

    def _start(self, argv: tuple[str, ...], out: IO[bytes], err: IO[bytes]) -> tuple[int, int]:
        """Run the program until it exits: (the stamp before it started, its status)."""
        t = time.monotonic_ns()
        try:
            p = subprocess.run(
                argv,
                stdout=out,
                stderr=err,
                timeout=self.timeout_s,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise InstrumentError(f"power command: {argv[0]!r} not found") from None
        except OSError as e:
            raise InstrumentError(f"power command {list(argv)}: {e}") from None
        except subprocess.TimeoutExpired:
            raise InstrumentError(
                f"power command {list(argv)} did not finish within {self.timeout_s:g} s "
                "(power.timeout_s; it was killed)"
            ) from None
        return t, p.returncode

    def describe(self) -> dict[str, object]:
        return {"on": list(self._on), "off": list(self._off)}
