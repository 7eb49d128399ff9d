"""Console bytes decoded from a capture's UART channel, with sigrok's sample positions:
the artifacts decode them (rig/artifacts/uart.py), the analysis reads them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _none() -> np.ndarray:
    return np.zeros(0, np.int64)


@dataclass(frozen=True, eq=False)
class UartBytes:
    """Console bytes and where sigrok's uart decoder puts them (sample numbers from 0)."""

    channel: str
    samplerate: int
    baud: int | None  # None: the line never talked and no rate was given
    baud_detected: bool
    data: bytes = b""
    ss: np.ndarray = field(default_factory=_none)  # sigrok's rx-data start per byte
    es: np.ndarray = field(default_factory=_none)  # ... and end
    frame_errors: int = 0  # start bits sampled high plus stop bits sampled low
    # The start bit's falling edge (the frame's first low sample): when the byte began.
    start: np.ndarray = field(default_factory=_none)
