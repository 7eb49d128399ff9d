"""Every level change of chosen channels of a capture, in one streaming pass: boot
signals change rarely, so the transition lists are tiny next to the samples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rig.artifacts.srzip import CHUNK_BYTES, narrow, open_blocks
from rig.errors import ArtifactError


@dataclass(frozen=True)
class Edges:
    """Transitions of some channels of a capture (sample numbers from 0)."""

    path: Path
    samplerate: int
    samples: int
    channels: tuple[str, ...]  # all channels of the capture, index -> name
    initial: dict[str, int]  # level at sample 0 of each scanned channel
    at: dict[str, np.ndarray]  # int64, sorted: first sample at each new level
    #: Channels that toggled faster than any boot signal (a floating probe, a clock on a
    #: mis-mapped channel): name -> the block start where that was seen. Their edges are
    #: not kept (`at` is empty), which bounds memory whatever the capture holds.
    dense: dict[str, int] = field(default_factory=dict)


#: More transitions than one per this many samples, over a block of at least
#: DENSE_MIN_BLOCK samples, is no boot signal: a UART needs several samples per bit and
#: a marker toggles a few times per boot.
DENSE_SAMPLES_PER_EDGE = 8
DENSE_MIN_BLOCK = 1 << 16


def scan_edges(path: Path, names: Sequence[str], block: int = CHUNK_BYTES) -> Edges:
    """Transitions of the named channels (a name used twice means its first channel)."""
    path = Path(path)
    with open_blocks(path, block) as (info, blocks):
        bits = {n: info.channels.index(n) for n in names}
        if info.unitsize > 1:  # a wide analyzer: the named channels, one byte a sample
            src = sorted(set(bits.values()))
            if len(src) > 8:
                raise ArtifactError(f"{path}: at most 8 channels are scanned at once")
            blocks = narrow(blocks, info.unitsize, src)
            bits = {n: src.index(b) for n, b in bits.items()}
        mask = np.uint8(sum({1 << b for b in bits.values()}))
        dense: dict[int, int] = {}  # bit -> block start where it was found dense
        first: int | None = None
        prev = 0
        offset = 0
        idx_parts: list[np.ndarray] = []
        val_parts: list[np.ndarray] = []
        # Reused buffers: fresh 4 MB arrays per block cost as much as the compare itself.
        masked = np.empty(block, np.uint8)
        diff = np.empty(block, np.bool_)

        def changes(a: np.ndarray, before: int) -> np.ndarray:
            nz = np.flatnonzero(np.not_equal(a[1:], a[:-1], out=diff[: len(a) - 1])) + 1
            return np.concatenate(([0], nz)) if a[0] != before else nz  # at the boundary

        for raw in blocks:
            # Other channels (a busy bus on a spare probe) must not count as changes.
            a = np.bitwise_and(raw, mask, out=masked[: len(raw)])
            if first is None:
                first = prev = int(a[0])
            nz = changes(a, prev)
            if len(nz):
                vals = a[nz]
                if len(a) >= DENSE_MIN_BLOCK and len(nz) * DENSE_SAMPLES_PER_EDGE > len(a):
                    flips = vals ^ np.concatenate(([prev], vals[:-1])).astype(np.uint8)
                    for b in set(bits.values()) - set(dense):
                        if np.count_nonzero(flips & (1 << b)) * DENSE_SAMPLES_PER_EDGE > len(a):
                            dense[b] = offset
                            mask = np.uint8(int(mask) & ~(1 << b) & 0xFF)
                    if dense:  # keep this block's edges of the others only
                        a = np.bitwise_and(a, mask, out=a)
                        nz = changes(a, prev & mask)
                        vals = a[nz]
                if len(nz):
                    idx_parts.append(nz + offset)
                    val_parts.append(vals)
            prev = int(a[-1])
            offset += len(a)
    idx = np.concatenate(idx_parts) if idx_parts else np.zeros(0, np.int64)
    val = np.concatenate(val_parts) if val_parts else np.zeros(0, np.uint8)
    start = first or 0
    flips = val ^ np.concatenate(([start], val[:-1])).astype(np.uint8)
    return Edges(
        path=path,
        samplerate=info.samplerate,
        samples=info.samples,
        channels=info.channels,
        initial={n: (start >> b) & 1 for n, b in bits.items()},
        at={
            n: np.zeros(0, np.int64) if b in dense else idx[(flips >> b) & 1 == 1].astype(np.int64)
            for n, b in bits.items()
        },
        dense={n: dense[b] for n, b in bits.items() if b in dense},
    )
