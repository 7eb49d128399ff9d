"""Read and write sigrok session files (`.sr`, the "srzip" format, version 2).

We write `.sr` ourselves: sigrok-cli rewrites the whole zip for every packet, unusably
slow at MHz rates. Readers stream the samples block by block (a 20 s capture at 24 MHz
is 480 MB), never all in memory at once.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rig.artifacts.atomic import atomic_open
from rig.artifacts.srmeta import (
    MAX_SAMPLERATE,
    MAX_UNITSIZE,
    MEMBER_ERRORS,
    channel_names,
    metadata_ini,
    number,
    parse_samplerate,
)
from rig.errors import ArtifactError
from rig.untrusted import check_regular

#: libsigrok's srzip output splits logic data into files of this size; we do the same so
#: that readers never need one huge member in memory twice.
CHUNK_BYTES = 4 << 20


def format_samplerate(hz: int) -> str:
    """Format like libsigrok's sr_samplerate_string ("1 MHz", "24 MHz", "500 kHz")."""
    for suffix, mul in (("GHz", 10**9), ("MHz", 10**6), ("kHz", 10**3)):
        if hz >= mul and hz % mul == 0:
            return f"{hz // mul} {suffix}"
    return f"{hz} Hz"


def _metadata(channels: Sequence[str], samplerate: int) -> str:
    lines = [
        "[global]",
        "sigrok version=0.5.2",  # the libsigrok srzip format we emulate; readers ignore it
        "",
        "[device 1]",
        "capturefile=logic-1",
        f"total probes={len(channels)}",
        f"samplerate={format_samplerate(samplerate)}",
        "total analog=0",
    ]
    lines += [f"probe{i + 1}={name}" for i, name in enumerate(channels)]
    lines += ["unitsize=1", ""]
    return "\n".join(lines)


def write_sr(
    path: Path,
    channels: Sequence[str],
    samplerate: int,
    chunks: Iterable[bytes | np.ndarray],
) -> int:
    """Write a `.sr` from an iterable of sample blocks (uint8). Returns samples written.

    Written whole or not at all (rig.artifacts.atomic), and fsynced: it is evidence.
    """
    if not 1 <= len(channels) <= 8:
        raise ValueError(f"{path}: 1 to 8 logic channels supported, got {len(channels)}")
    total = members = 0
    pending = bytearray()
    with (
        atomic_open(path, "wb") as f,
        zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z,
    ):
        z.writestr("version", "2")
        z.writestr("metadata", _metadata(channels, samplerate))
        for block in chunks:
            raw = block.tobytes() if isinstance(block, np.ndarray) else bytes(block)
            total += len(raw)
            pending += raw
            while len(pending) >= CHUNK_BYTES:
                members += 1
                z.writestr(f"logic-1-{members}", bytes(pending[:CHUNK_BYTES]))
                del pending[:CHUNK_BYTES]
        if pending or members == 0:
            z.writestr(f"logic-1-{members + 1}", bytes(pending))
    return total


def narrow(blocks: Iterable[np.ndarray], unitsize: int, src: Sequence[int]) -> Iterator[np.ndarray]:
    """Blocks of `unitsize`-byte samples (little-endian, as sigrok writes them) -> one
    byte a sample whose bit i is channel src[i]. A sample split across two blocks is
    carried over; a partial last sample (a killed capture) is dropped."""
    carry = np.zeros(0, np.uint8)
    for raw in blocks:
        buf = np.concatenate((carry, raw)) if len(carry) else raw
        n = len(buf) - len(buf) % unitsize
        carry = buf[n:].copy()
        s = buf[:n].reshape(-1, unitsize)
        out = np.zeros(len(s), np.uint8)
        for i, b in enumerate(src):
            out |= ((s[:, b // 8] >> (b % 8)) & 1) << i
        if len(out):
            yield out


def convert_binary(
    raw: Path,
    sr: Path,
    channels: Sequence[str],
    samplerate: int,
    unitsize: int = 1,
    bits: Sequence[int] | None = None,
) -> int:
    """Turn a raw capture (sigrok-cli `-O binary`) into a `.sr`; returns the samples.

    With `unitsize` 1 and no `bits` the bytes are kept as they are, `channels` naming
    bits 0..7. Otherwise (a 16-channel device writes 2 bytes per sample) channel k of
    the `.sr` is bit `bits[k]` of each raw sample."""
    if bits is None and unitsize != 1:
        raise ValueError("a raw capture of more than one byte per sample needs `bits`")
    if bits is not None and len(bits) != len(channels):
        raise ValueError("one raw bit per channel")

    def blocks() -> Iterator[bytes]:
        with raw.open("rb") as f:
            while block := f.read(CHUNK_BYTES):
                yield block

    if bits is None:
        return write_sr(sr, channels, samplerate, blocks())
    arrays = (np.frombuffer(b, np.uint8) for b in blocks())
    return write_sr(sr, channels, samplerate, narrow(arrays, unitsize, bits))


@dataclass(frozen=True)
class CaptureInfo:
    """A capture's metadata, read without loading the samples."""

    path: Path
    samplerate: int
    channels: tuple[str, ...]
    members: tuple[str, ...]  # logic data members in order
    samples: int
    unitsize: int = 1  # bytes per sample (channel i is bit i % 8 of byte i // 8)


def _open(path: Path) -> zipfile.ZipFile:
    # zipfile reads a device (/dev/zero, a FIFO) until memory runs out: files only.
    if not check_regular(path, error=ArtifactError):
        raise ArtifactError(f"{path}: no such capture file")
    try:
        return zipfile.ZipFile(path)
    except FileNotFoundError:
        raise ArtifactError(f"{path}: no such capture file") from None
    except PermissionError as e:
        raise ArtifactError(f"{path}: cannot be read: {e.strerror}") from None
    except MEMBER_ERRORS as e:
        raise ArtifactError(f"{path}: not a sigrok session (bad zip: {e})") from None


def _info(path: Path, z: zipfile.ZipFile) -> CaptureInfo:
    names = set(z.namelist())
    if "metadata" not in names:
        raise ArtifactError(f"{path}: no 'metadata' member; not a sigrok session file")
    cp = metadata_ini(path, z)
    dev = next((s for s in cp.sections() if s.startswith("device ")), None)
    if dev is None:
        raise ArtifactError(f"{path}: metadata has no [device N] section")
    sec = cp[dev]
    prefix = sec.get("capturefile")
    if not prefix:
        raise ArtifactError(f"{path}: metadata [{dev}] has no 'capturefile' key")
    try:
        samplerate = parse_samplerate(sec.get("samplerate", ""))
        if not 1 <= samplerate <= MAX_SAMPLERATE:
            raise ValueError("out of range")
    except ValueError:
        raise ArtifactError(
            f"{path}: metadata [{dev}] samplerate: expected e.g. '1 MHz', "
            f"found {sec.get('samplerate')!r} (a whole number of Hz, 1 Hz to 100 GHz)"
        ) from None
    text, total = sec.get("unitsize", "1").strip(), sec.get("total probes", "0")
    unitsize = number(text)
    if not 1 <= unitsize <= MAX_UNITSIZE:
        raise ArtifactError(
            f"{path}: metadata [{dev}] unitsize: expected 1 to {MAX_UNITSIZE} bytes a "
            f"sample, found {text!r}"
        )
    channels = channel_names(f"{path}: metadata [{dev}]", sec, total, unitsize)
    # Like libsigrok: `prefix` alone, or prefix-1, prefix-2, ... with no gap.
    chunks = {number(n[len(prefix) + 1 :]) for n in names if n.startswith(prefix + "-")}
    chunks.discard(-1)
    members = [prefix] if prefix in names else []
    members += [f"{prefix}-{i}" for i in sorted(chunks)]
    if not members:
        raise ArtifactError(f"{path}: no logic data members named {prefix}-N")
    if chunks and sorted(chunks) != list(range(1, len(chunks) + 1)):
        raise ArtifactError(f"{path}: logic data members {prefix}-N are not numbered 1..N")
    nbytes = sum(z.getinfo(m).file_size for m in members)
    if nbytes % unitsize:
        raise ArtifactError(
            f"{path}: the logic data holds {nbytes} bytes, not a whole number of "
            f"{unitsize}-byte samples (unitsize {unitsize})"
        )
    return CaptureInfo(path, samplerate, channels, tuple(members), nbytes // unitsize, unitsize)


def read_info(path: Path) -> CaptureInfo:
    """Read only a capture's metadata (sample rate, channel names, sample count)."""
    path = Path(path)
    with _open(path) as z:
        return _info(path, z)


@contextmanager
def open_blocks(
    path: Path, block: int = CHUNK_BYTES
) -> Iterator[tuple[CaptureInfo, Iterator[np.ndarray]]]:
    """`with open_blocks(p) as (info, blocks)`: the metadata, then uint8 sample blocks
    whose concatenation is the capture. Any damage (bad deflate data, CRC mismatch, a
    member shorter than the directory says) raises ArtifactError naming file and member."""
    path = Path(path)
    with _open(path) as z:
        info = _info(path, z)
        yield info, _blocks(path, z, info, block)


def _blocks(path: Path, z: zipfile.ZipFile, info: CaptureInfo, block: int) -> Iterator[np.ndarray]:
    for member in info.members:
        got = 0
        try:
            with z.open(member) as f:
                while buf := f.read(block):
                    got += len(buf)
                    yield np.frombuffer(buf, dtype=np.uint8)
        except MEMBER_ERRORS as e:
            raise ArtifactError(f"{path}: logic data member {member!r} is corrupt: {e}") from None
        # A damaged directory entry can claim another size than the (CRC-valid) data has.
        if got != (want := z.getinfo(member).file_size):
            raise ArtifactError(
                f"{path}: logic data member {member!r} holds {got} bytes, the zip directory "
                f"says {want}; the file is damaged"
            )


def check_members(path: Path) -> CaptureInfo:
    """The metadata, once every logic member has been read through for its size and CRC
    checks: a reader that takes the samples elsewhere (sigrok-cli) then reads what the
    zip directory, and so `info.samples`, says."""
    with open_blocks(path) as (info, blocks):
        for _ in blocks:
            pass
    return info
