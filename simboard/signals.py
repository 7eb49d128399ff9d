"""The analyzer-visible signals of one boot, as toggle times (pure).

Each signal is low before the boot, so a list of toggle times describes it completely;
times are float ns relative to a reference (the analyzer's sample 0) to keep precision.
When the rail falls, every line of the board falls with it.
"""

from __future__ import annotations

import numpy as np

from rig.names import MARKERS, POWER, UART_TX
from simboard.board import Boot


def _cut(toggles: np.ndarray, cut: float) -> np.ndarray:
    """Drop toggles at or after `cut`; if the line is high then, it falls at `cut`."""
    kept = toggles[toggles < cut]
    if len(kept) % 2 and np.isfinite(cut):
        kept = np.append(kept, cut)
    return kept


def uart_levels(data: bytes, byte_t: np.ndarray, bit_s: float) -> tuple[np.ndarray, np.ndarray]:
    """8N1 bit levels and their start times (s) for bytes starting at `byte_t`."""
    n = len(data)
    levels = np.empty((n, 10), dtype=np.uint8)
    levels[:, 0] = 0  # start bit
    levels[:, 1:9] = np.unpackbits(
        np.frombuffer(data, dtype=np.uint8)[:, None], axis=1, bitorder="little"
    )  # data bits, LSB first
    levels[:, 9] = 1  # stop bit
    times = byte_t[:, None] + np.arange(10) * bit_s
    return levels.ravel(), times.ravel()


def boot_toggles(boot: Boot, ref_ns: int) -> dict[str, np.ndarray]:
    """Toggle times of every signal of `boot`, ns after `ref_ns`."""
    edge = float(boot.power_edge_ns - ref_ns)
    cut = float(boot.drop_ns - ref_ns) if boot.drop_ns is not None else np.inf
    tl = boot.timeline
    out = {POWER: _cut(float(boot.contact_ns - ref_ns) + boot.bounce_ns.astype(np.float64), cut)}
    for name in MARKERS:
        t = tl.markers.get(name)
        out[name] = _cut(np.array([edge + t * 1e9] if t is not None else []), cut)
    # UART TX: idle high from the power edge, then every byte bit by bit.
    levels, times = uart_levels(tl.data, tl.byte_t, 1.0 / tl.baud)
    levels = np.concatenate([[1], levels])
    times = np.concatenate([[0.0], times])
    changed = levels != np.concatenate([[0], levels[:-1]])
    out[UART_TX] = _cut(edge + times[changed] * 1e9, cut)
    return out
