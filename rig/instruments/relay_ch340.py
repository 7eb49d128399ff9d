"""CH340 USB relay modules (LCUS-1/2/4 and clones): 4-byte frames `A0 <ch> <state> <sum>`.

The module never answers, so a frame that got lost cannot be detected here; the power
edge on the analyzer is the evidence that the relay switched.
"""

from __future__ import annotations

import time

import serial

from rig.instruments.protocols import InstrumentError, PowerProtocol

START = 0xA0


def frame(channel: int, on: bool) -> bytes:
    """The command frame switching `channel` (1-based) on or off."""
    if not 1 <= channel <= 0xFF - START - 1:
        raise ValueError(f"relay channel {channel} out of range 1..{0xFF - START - 1}")
    state = 1 if on else 0
    return bytes((START, channel, state, (START + channel + state) & 0xFF))


class Ch340Relay(PowerProtocol):
    def __init__(self, port: str, channel: int = 1, baud: int = 9600) -> None:
        self.channel = channel
        try:
            self._ser = serial.Serial(port, baudrate=baud, timeout=1, write_timeout=1)
        except serial.SerialException as e:
            raise InstrumentError(f"relay: cannot open {port}: {e}") from None
        self.port = port

    def _send(self, on: bool) -> int:
        data = frame(self.channel, on)
        t = time.monotonic_ns()
        try:
            self._ser.write(data)
            self._ser.flush()  # tcdrain: the frame has left the host when we return
        except serial.SerialException as e:
            raise InstrumentError(f"relay {self.port}: write failed: {e}") from None
        return t

    def on(self) -> int:
        return self._send(True)

    def off(self) -> int:
        return self._send(False)

    def close(self) -> None:
        self._ser.close()
