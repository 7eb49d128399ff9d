"""Decode the console (8N1) from a capture's UART TX channel, on the analyzer clock:
sigrok's own `uart` decoder (libsigrokdecode 0.5.3) replayed on transitions, the same
bytes and sample numbers (the rules: docs/engines.md, "UART tap")."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from rig.artifacts.baud import detect_baud
from rig.artifacts.edges import Edges, scan_edges
from rig.artifacts.srzip import read_info
from rig.errors import ArtifactError
from rig.model.uart import UartBytes
from rig.names import UART_TX


def _levels(at: np.ndarray, level0: int, points: np.ndarray) -> np.ndarray:
    return (level0 ^ (np.searchsorted(at, points, side="right") & 1)).astype(np.uint8)


def decode_8n1(
    at: np.ndarray, level0: int, samples: int, samplerate: int, baud: int, since: int = 0
) -> tuple[bytes, np.ndarray, np.ndarray, int, np.ndarray]:
    """(data, ss, es, frame errors, start edges) of a line with transitions `at` and
    level `level0` at sample 0; frames start at `since` or later."""
    w = float(samplerate) / float(baud)
    after = (np.arange(1, len(at) + 1) + level0) & 1
    falls = at[(after == 0) & (at >= since)]
    fs = falls.astype(np.float64) + (w - 1) / 2.0  # same float steps as the decoder

    def point(k: int, f: np.ndarray = fs) -> np.ndarray:
        return np.ceil(f + k * w).astype(np.int64)

    p0, p9 = point(0), point(9)
    start_ok = _levels(at, level0, p0) == 0
    # Where each candidate frame leaves the decoder, and the falling edge it waits for next.
    nxt = np.searchsorted(falls, np.where(start_ok, p9, p0), side="right").tolist()
    chain: list[int] = []
    i = 0
    while i < len(falls):
        chain.append(i)
        i = nxt[i]
    idx = np.array(chain, dtype=np.int64)
    falls, fs, p0, p9, start_ok = falls[idx], fs[idx], p0[idx], p9[idx], start_ok[idx]
    bits_at = np.stack([point(k, fs) for k in range(1, 9)], axis=1)
    has_byte = start_ok & (bits_at[:, -1] < samples)
    bits = _levels(at, level0, bits_at[has_byte])
    data = np.packbits(bits, axis=1, bitorder="little").tobytes() if len(bits) else b""
    stop_bad = start_ok & (p9 < samples) & (_levels(at, level0, p9) == 0)
    errors = int(np.count_nonzero(~start_ok & (p0 < samples))) + int(np.count_nonzero(stop_bad))
    ss = bits_at[has_byte, 0] - math.floor(w / 2.0)
    es = bits_at[has_byte, -1] + math.ceil(w / 2.0)
    return data, ss, es, errors, falls[has_byte].astype(np.int64)


def uart_from_edges(
    edges: Edges, channel: str = UART_TX, baud: int | None = None, since: int = 0
) -> UartBytes:
    """Decode `channel` from a transition scan that included it; `since`: the boot's
    power edge, before which the line belongs to the previous boot (an analyzer armed
    before the power-off sees it talk, then fall with the rail: not this boot's bytes)."""
    if baud is not None and baud <= 0:
        raise ArtifactError(f"{edges.path}: baud must be positive, got {baud}")
    if channel in edges.dense:
        raise ArtifactError(
            f"{edges.path}: channel {channel!r} toggles faster than any console from sample "
            f"{edges.dense[channel]} on (a floating probe or a mis-mapped channel): not decoded"
        )
    at, level0 = edges.at[channel], edges.initial[channel]
    detected = baud is None
    if baud is None:
        baud = detect_baud(at, edges.samplerate)
        if baud is None:
            if len(at) > 2:  # it talks, but not like a UART at any rate we can sample
                raise ArtifactError(
                    f"{edges.path}: channel {channel!r}: no baud rate fits its "
                    f"{len(at)} transitions; set the console baud rate in the config"
                )
            return UartBytes(channel, edges.samplerate, None, False)
    data, ss, es, errors, start = decode_8n1(
        at, level0, edges.samples, edges.samplerate, baud, since
    )
    return UartBytes(channel, edges.samplerate, baud, detected, data, ss, es, errors, start)


def decode_uart(
    capture: Path, channel: str = UART_TX, baud: int | None = None, since: int = 0
) -> UartBytes:
    """The console bytes on `channel` (8N1) from sample `since` on; the rate is detected
    when `baud` is None."""
    capture = Path(capture)
    info = read_info(capture)
    if channel not in info.channels:
        raise ArtifactError(
            f"{capture}: no channel {channel!r} (channels: {', '.join(info.channels)})"
        )
    return uart_from_edges(scan_edges(capture, [channel]), channel, baud, since)
