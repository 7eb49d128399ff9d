"""Numato Lab USB relay modules (the serial ASCII family): `relay on N` + CR. Each
command is echoed and ends with the `>` prompt, so a lost command is an error here, not
a boot that never powered; `ver` and `id get` go to run.json."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import serial

from rig.config.tomlcheck import Table
from rig.errors import InstrumentError
from rig.instruments.exclusive import open_serial
from rig.instruments.protocols import SwitchedPower
from rig.instruments.registry import POWER, BenchContext

_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUV"  # relay numbers on up to 32-channel modules


@dataclass(frozen=True)
class NumatoSettings:
    port: str  # a serial port or pyserial URL; "sim": the simulated board's
    relay: int  # 0-based, as the module counts
    baud: int
    timeout_s: float


@POWER.register("numato")
class NumatoRelay(SwitchedPower):
    @classmethod
    def parse(cls, t: Table, base: Path) -> NumatoSettings:
        relay = t.int("relay", 0, min=0)
        if relay >= len(_DIGITS):
            t.error("relay", f"a relay number 0..{len(_DIGITS) - 1}", relay)
        return NumatoSettings(
            t.str("port"), relay, t.int("baud", 19200, min=1), t.seconds("timeout_s", 1.0, min=0.01)
        )

    @classmethod
    def build(cls, s: NumatoSettings, bench: BenchContext) -> NumatoRelay:
        port = bench.port(s.port, "relay_numato", "numato relay")
        return cls(port, s.relay, s.baud, s.timeout_s)

    def __init__(
        self, port: str, relay: int = 0, baud: int = 19200, timeout_s: float = 1.0
    ) -> None:
        self.port, self.relay, self.timeout_s = port, relay, timeout_s
        self._ser = open_serial(port, "numato relay", baudrate=baud, timeout=timeout_s)
        self._ser.reset_input_buffer()
        self.version = self.command("ver")
        self.device_id = self.command("id get")

    def command(self, text: str) -> str:
        """Send one command; the module's answer (echo and prompt removed)."""
        try:
            self._ser.write(text.encode("ascii") + b"\r")
            self._ser.flush()
            got = self._ser.read_until(b">")
        except serial.SerialException as e:
            raise InstrumentError(f"numato relay {self.port}: {text!r}: {e}") from None
        if not got.endswith(b">"):
            raise InstrumentError(
                f"numato relay {self.port}: no answer to {text!r} within {self.timeout_s:g} s "
                f"(got {got[:80]!r}); is it a Numato module?"
            )
        body = got[:-1].decode("ascii", "replace").replace("\n", "\r").split("\r")
        lines = [x.strip() for x in body if x.strip() and x.strip() != text]
        return lines[-1] if lines else ""

    def switch(self, on: bool) -> int:
        t = time.monotonic_ns()
        word = "on" if on else "off"
        self.command(f"relay {word} {_DIGITS[self.relay]}")
        state = self.command(f"relay read {_DIGITS[self.relay]}")
        if state != word:
            raise InstrumentError(
                f"numato relay {self.port}: relay {self.relay} reads {state!r} after 'relay {word}'"
            )
        return t

    def describe(self) -> dict[str, object]:
        return {"model": "Numato USB relay", "port": self.port, "relay": self.relay,
                "version": self.version, "id": self.device_id}  # fmt: skip

    def close(self) -> None:
        self._ser.close()
