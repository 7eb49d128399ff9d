"""An FTDI-like USB-serial adapter: when received bytes reach the host (pure model).

A byte enters the adapter's buffer at the end of its stop bit. The buffer goes to the
host as one USB transfer when it holds `buffer_bytes`, or at the next tick of the
latency timer if it holds anything. The timer ticks every latency period since the last
transfer (so a full-buffer transfer restarts it). This is why console timestamps taken
on the host are late by up to a latency period, and never early.
"""

from __future__ import annotations

import math

import numpy as np

Transfer = tuple[int, bytes]  # host CLOCK_MONOTONIC ns of delivery, data


def transfers(
    arrivals_ns: np.ndarray,
    data: bytes,
    latency_ns: float,
    buffer_bytes: int,
    anchor_ns: float,
) -> tuple[list[Transfer], float]:
    """USB transfers for bytes arriving (stop bit done) at `arrivals_ns`, ascending.

    `anchor_ns` is the last timer restart before the first byte; returns the transfers
    and the anchor after the last one, to continue with the next batch of bytes.
    """
    out: list[Transfer] = []
    n = len(data)
    i = 0
    while i < n:
        first = float(arrivals_ns[i])
        ticks = max(1, math.ceil((first - anchor_ns) / latency_ns))
        tick = anchor_ns + ticks * latency_ns
        j = int(np.searchsorted(arrivals_ns, tick, side="right"))
        if j - i >= buffer_bytes:  # the buffer fills before the tick
            j = i + buffer_bytes
            anchor_ns = float(arrivals_ns[j - 1])
        else:
            anchor_ns = tick
        out.append((math.ceil(anchor_ns), data[i:j]))
        i = j
    return out, anchor_ns
