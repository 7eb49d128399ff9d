"""CH340 USB relay modules (LCUS-1/2/4 and clones): 4-byte frames `A0 <ch> <state> <sum>`.
The module never answers: the power edge on the analyzer shows that the relay switched."""

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

START = 0xA0
MAX_CHANNEL = 0xFF - START - 1


def frame(channel: int, on: bool) -> bytes:
    """The command frame switching `channel` (1-based) on or off."""
    if not 1 <= channel <= MAX_CHANNEL:
        raise ValueError(f"relay channel {channel} out of range 1..{MAX_CHANNEL}")
    state = 1 if on else 0
    return bytes((START, channel, state, (START + channel + state) & 0xFF))


@dataclass(frozen=True)
class Ch340Settings:
    port: str  # a serial port (any pyserial URL), or "sim": the simulated board's relay
    channel: int
    baud: int


@POWER.register("ch340")
class Ch340Relay(SwitchedPower):
    @classmethod
    def parse(cls, t: Table, base: Path) -> Ch340Settings:
        port = t.str("port")
        if not port:
            t.error("port", "the relay's serial port", port)
        channel = t.int("channel", 1, min=1)
        if channel > MAX_CHANNEL:
            t.error("channel", f"a relay channel 1..{MAX_CHANNEL}", channel)
        return Ch340Settings(port, channel, t.int("baud", 9600, min=1))

    @classmethod
    def build(cls, s: Ch340Settings, bench: BenchContext) -> Ch340Relay:
        port = bench.port(s.port, "relay", "relay")
        return cls(port, s.channel, s.baud)

    def __init__(self, port: str, channel: int = 1, baud: int = 9600) -> None:
        self.channel = channel
        self._ser = open_serial(port, "relay", baudrate=baud, timeout=1, write_timeout=1)
        self.port = port

    def switch(self, on: bool) -> int:
        data = frame(self.channel, on)
        t = time.monotonic_ns()
        try:
            self._ser.write(data)
            self._ser.flush()  # tcdrain: the frame has left the host when we return
        except serial.SerialException as e:
            raise InstrumentError(f"relay {self.port}: write failed: {e}") from None
        return t

    def describe(self) -> dict[str, object]:
        """The module never answers: what run.json can say is where it was driven."""
        return {"model": "CH340 USB relay (A0 frames)", "port": self.port, "channel": self.channel}

    def close(self) -> None:
        self._ser.close()
