"""Stream a `.sr` capture's logic data block by block.

A 20 s capture at 24 MHz is 480 MB of samples; readers that scan it go member by
member in blocks of at most `CHUNK_BYTES`, so the samples never sit in memory at once.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

# The same open and metadata checks (and error texts) as read_sr/read_info.
from rig.artifacts.srzip import (
    CHUNK_BYTES,
    MEMBER_ERRORS,
    CaptureError,
    CaptureInfo,
    _info,
    _open,
    check_size,
)


@contextmanager
def open_blocks(
    path: Path, block: int = CHUNK_BYTES
) -> Iterator[tuple[CaptureInfo, Iterator[np.ndarray]]]:
    """`with open_blocks(p) as (info, blocks)`: the metadata, then uint8 sample blocks.

    Blocks follow the members in order; their concatenation is the capture. Any damage
    (bad deflate data, CRC mismatch, a member shorter than the directory says) raises
    CaptureError naming the file and the member.
    """
    path = Path(path)
    with _open(path) as z:
        info = _info(path, z)
        yield info, _blocks(path, z, info, block)


def check_members(path: Path) -> CaptureInfo:
    """The metadata, once every logic member has been read through for its size and CRC
    checks only: a reader that takes the samples elsewhere (sigrok-cli) then reads what
    the zip directory, and so `info.samples`, says."""
    with open_blocks(path) as (info, blocks):
        for _ in blocks:
            pass
    return info


def _blocks(path: Path, z: zipfile.ZipFile, info: CaptureInfo, block: int) -> Iterator[np.ndarray]:
    for member in info.members:
        got = 0
        try:
            with z.open(member) as f:
                while buf := f.read(block):
                    got += len(buf)
                    yield np.frombuffer(buf, dtype=np.uint8)
        except MEMBER_ERRORS as e:
            raise CaptureError(f"{path}: logic data member {member!r} is corrupt: {e}") from None
        check_size(path, z, member, got)
