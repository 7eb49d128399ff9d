"""Decode the console (8N1) from a capture's UART TX channel, on the analyzer clock:
sigrok's own `uart` decoder (libsigrokdecode 0.5.3) replayed on transitions, the same
bytes and sample numbers (the rules: docs/engines.md, "UART tap"). An unknown baud rate
is found from the lengths of the line's runs: each standard rate scored by the runs it
explains (docs/engines.md, "Baud rate")."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from rig.artifacts.edges import Edges, scan_edges
from rig.artifacts.srzip import read_info
from rig.errors import ArtifactError
from rig.model.uart import UartBytes
from rig.names import UART_TX

STANDARD_BAUDS = (
    300, 600, 1200, 2400, 4800, 9600, 14400, 19200, 28800, 38400, 57600, 74880, 76800,
    115200, 128000, 153600, 230400, 250000, 256000, 460800, 500000, 576000, 921600,
    1000000, 1152000, 1500000, 2000000, 2500000, 3000000, 3500000, 4000000,
)  # fmt: skip
#: Fewer samples per bit than this cannot be told from noise (sigrok needs some too).
MIN_SAMPLES_PER_BIT = 4.0
#: A run within this many bits of a whole number of bits is explained by a rate.
TOLERANCE_BITS = 0.25
#: Longer runs are idle line or breaks, which say nothing about the rate.
MAX_RUN_BITS = 9.75
#: Measured rates further than this from every standard rate are kept as measured.
SNAP = 0.02
_MAX_RUNS = 1_000_000


#: Runs of 1, 2 and 3 bits must each be at least this share of the in-frame runs...
MIN_SHARE = 0.01
#: ...once there are this many; below, single-bit runs are enough.
FEW = 100
#: Fewer in-frame runs (a byte or two) fit too many rates: no guess then.
MIN_RUNS = 20


def _fit(runs: np.ndarray, bw: float) -> tuple[int, np.ndarray, np.ndarray]:
    """(score, which runs the bit width explains, their bit counts); score < 0: no fit."""
    x = runs / bw
    n = np.rint(x)
    inframe = x < MAX_RUN_BITS
    fit = inframe & (n >= 1) & (np.abs(x - n) <= TOLERANCE_BITS)
    total = int(np.count_nonzero(inframe))
    # A few bytes ("U", "ok") need not have every run length; noise needs numbers.
    shares = [np.count_nonzero(fit & (n == k)) for k in ((1, 2, 3) if total >= FEW else (1,))]
    if total < MIN_RUNS or min(shares) < max(3, MIN_SHARE * total):
        return -1, fit, n
    return 2 * int(np.count_nonzero(fit)) - total, fit, n


def detect_baud(at: np.ndarray, samplerate: int) -> int | None:
    """The baud rate of a line with transitions at samples `at`; None if it never talks."""
    runs = np.diff(np.asarray(at, dtype=np.int64)).astype(np.float64)
    if len(runs) > _MAX_RUNS:  # plenty to decide on; keeps noisy lines cheap
        runs = runs[:: len(runs) // _MAX_RUNS + 1]
    best: tuple[int, float] | None = None
    for baud in STANDARD_BAUDS:
        bw = samplerate / baud
        if bw < MIN_SAMPLES_PER_BIT:
            break
        score, _, _ = _fit(runs, bw)
        if score > 0 and (best is None or score > best[0]):
            best = (score, bw)
    if best is None:
        return None
    _, fit, n = _fit(runs, best[1])
    measured = samplerate * float(n[fit].sum()) / float(runs[fit].sum())
    nearest = min(STANDARD_BAUDS, key=lambda b: abs(np.log(b / measured)))
    return nearest if abs(nearest / measured - 1) <= SNAP else round(measured)


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
