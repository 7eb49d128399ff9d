"""Synthetic logic captures for decoder and engine tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from rig.artifacts import srzip
from rig.artifacts.srzip import open_blocks, write_sr
from rig.errors import ArtifactError

RATE = 1_000_000  # 1 MHz: one sample per microsecond, so test numbers read as us


def make_capture(
    path: Path,
    n: int,
    toggles: dict[str, list[int]],
    rate: int = RATE,
    chunk: int | None = None,
    monkeypatch: pytest.MonkeyPatch | None = None,
) -> Path:
    """Channels in dict order; each line starts low and toggles at the given samples
    (a toggle at 0: high from the start, no edge there). `chunk`: srzip member size in
    bytes, to put edges across member boundaries."""
    data = np.zeros(n, np.uint8)
    for bit, samples in enumerate(toggles.values()):
        flips = np.zeros(n + 1, np.uint8)
        np.add.at(flips, np.asarray(samples, dtype=np.int64), 1)
        data |= (np.cumsum(flips[:n]) & 1).astype(np.uint8) << bit
    if chunk is None:
        write_sr(path, list(toggles), rate, [data])
    else:
        assert monkeypatch is not None
        with monkeypatch.context() as m:
            m.setattr(srzip, "CHUNK_BYTES", chunk)
            write_sr(path, list(toggles), rate, [data])
    return path


def bounce_then_up(first: int, pulses: int = 3, width: int = 200, gap: int = 100) -> list[int]:
    """Relay bounce: `pulses` short high pulses from `first`, then the rail stays high."""
    out = []
    for k in range(pulses):
        s = first + k * (width + gap)
        out += [s, s + width]
    return [*out, first + pulses * (width + gap)]


@dataclass(frozen=True)
class Capture:
    """A whole capture in memory: one byte (up to 8 channels) a sample."""

    samplerate: int
    channels: tuple[str, ...]  # index -> name, bit i of each sample is channel i
    data: np.ndarray  # uint8, one element per sample

    @property
    def samples(self) -> int:
        return len(self.data)


def read_sr(path: Path) -> Capture:
    """A `.sr` of one byte a sample, read whole through the rig's streaming reader."""
    with open_blocks(path) as (info, blocks):
        if info.unitsize != 1:
            raise ArtifactError(f"{path}: unitsize {info.unitsize}: read it with scan_edges")
        data = np.concatenate([np.zeros(0, np.uint8), *blocks])
    return Capture(info.samplerate, info.channels, data)
