"""The simulated logic analyzer: renders raw samples like `sigrok-cli -O binary`.

Sample i is taken at armed_ns + i * 1e9 / samplerate; bit c of each sample byte is
device channel c. A transition at host time T shows first in sample
ceil((T - armed_ns) * samplerate / 1e9). Samples are rendered block by block from the
sparse toggle lists (xor-accumulate), so 20 s at 24 MHz never sits in memory at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rig.errors import InstrumentError
from rig.names import CHANNELS
from simboard.board import Boot
from simboard.signals import boot_toggles

BLOCK_SAMPLES = 1 << 22


@dataclass(frozen=True)
class Arming:
    armed_ns: int
    samplerate: int
    wiring: dict[str, int]  # signal -> device channel 0..7; unwired signals not captured


def check_arming(samplerate: object, wiring: object) -> tuple[int, dict[str, int]]:
    if (
        isinstance(samplerate, bool)
        or not isinstance(samplerate, int)
        or not 1 <= samplerate <= 500_000_000
    ):
        raise InstrumentError(
            f"samplerate: expected an integer in Hz (1..500000000), found {samplerate!r}"
        )
    if not isinstance(wiring, Mapping) or not wiring:
        raise InstrumentError(
            f"wiring: expected {{signal: channel}} with signals of {CHANNELS}, found {wiring!r}"
        )
    out: dict[str, int] = {}
    for name, ch in wiring.items():
        if name not in CHANNELS:
            raise InstrumentError(f"wiring: unknown signal {name!r}; expected one of {CHANNELS}")
        if isinstance(ch, bool) or not isinstance(ch, int) or not 0 <= ch <= 7:
            raise InstrumentError(f"wiring.{name}: expected a device channel 0..7, found {ch!r}")
        if ch in out.values():
            raise InstrumentError(f"wiring.{name}: channel {ch} is already wired")
        out[name] = ch
    return samplerate, out


def sample_count(arming: Arming, stopped_ns: int) -> int:
    """Samples taken from arming up to and including `stopped_ns`."""
    return (stopped_ns - arming.armed_ns) * arming.samplerate // 1_000_000_000 + 1


def first_sample(rel_ns: np.ndarray | float, samplerate: int) -> np.ndarray:
    """Index of the first sample that sees a transition `rel_ns` after sample 0."""
    return np.ceil(np.asarray(rel_ns, dtype=np.float64) * (samplerate / 1e9)).astype(np.int64)


def _transitions(
    boots: Iterable[Boot], arming: Arming, n: int
) -> tuple[int, np.ndarray, np.ndarray]:
    """Initial sample value, then sorted sample indexes and the channel bits they flip."""
    initial = 0
    idx_parts: list[np.ndarray] = []
    bit_parts: list[np.ndarray] = []
    for boot in boots:
        toggles = boot_toggles(boot, arming.armed_ns)
        for name, channel in arming.wiring.items():
            idx = first_sample(toggles[name], arming.samplerate)
            bit = 1 << channel
            if np.count_nonzero(idx <= 0) % 2:  # already toggled when sampling began
                initial ^= bit
            idx = idx[(idx > 0) & (idx < n)]
            idx_parts.append(idx)
            bit_parts.append(np.full(len(idx), bit, dtype=np.uint8))
    idx = np.concatenate(idx_parts) if idx_parts else np.zeros(0, np.int64)
    bits = np.concatenate(bit_parts) if bit_parts else np.zeros(0, np.uint8)
    order = np.argsort(idx, kind="stable")
    return initial, idx[order], bits[order]


def blocks(
    boots: Iterable[Boot], arming: Arming, n: int, block: int = BLOCK_SAMPLES
) -> Iterator[np.ndarray]:
    """The capture's samples (uint8) in blocks of at most `block` samples."""
    level, idx, bits = _transitions(boots, arming, n)
    for b0 in range(0, n, block):
        b1 = min(n, b0 + block)
        lo, hi = np.searchsorted(idx, [b0, b1])
        out = np.zeros(b1 - b0, dtype=np.uint8)
        np.bitwise_xor.at(out, idx[lo:hi] - b0, bits[lo:hi])  # flips at the same sample cancel
        np.bitwise_xor.accumulate(out, out=out)
        out ^= level
        level = int(out[-1])
        yield out


def render(path: Path, boots: Iterable[Boot], arming: Arming, stopped_ns: int) -> int:
    """Write the raw capture to `path`; returns the number of samples."""
    n = sample_count(arming, stopped_ns)
    with Path(path).open("wb") as f:
        for out in blocks(boots, arming, n):
            f.write(memoryview(out))
    return n
