"""Raw captures a killed run left behind: converted to `capture.sr`, or removed.

A run holds a lock on its folder's `.lock` while it measures, which the kernel drops
when the process dies: a raw `capture.bin` in an unlocked folder is a leftover. run.json
states its layout before power-on; without a layout the raw file cannot be read and goes.
"""

from __future__ import annotations

import fcntl
import os
import weakref
from dataclasses import dataclass
from pathlib import Path

from rig.artifacts import rundir
from rig.errors import ArtifactError

LOCK = ".lock"
#: This process's locks by folder (weak: a lock still goes with its last reference).
_HELD: weakref.WeakValueDictionary[Path, RunLock] = weakref.WeakValueDictionary()


class RunLock:
    """Held by the process measuring into a folder, released by `release()` or its death."""

    def __init__(self, folder: Path) -> None:
        self._fd: int | None = os.open(folder / LOCK, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        _HELD[folder] = self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        # A cycle that returns drops its lock with its frame: the folder is free at once,
        # and a soak of a thousand cycles does not keep a thousand descriptors open.
        self.release()


def release_own(folder: Path) -> None:
    """Release this process's lock on `folder`, if it holds one: a cycle that raised
    keeps its lock alive in the exception's frames until the garbage collector runs."""
    lock = _HELD.get(folder)
    if lock is not None:
        lock.release()


def is_locked(folder: Path) -> bool:
    """A run is measuring in `folder` now (its `.lock` is held)."""
    try:
        fd = os.open(folder / LOCK, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Leftover:
    folder: Path
    action: str  # "converted" | "removed"
    detail: str

    def describe(self) -> str:
        return (
            f"{self.folder}: raw capture left by an interrupted run {self.action} ({self.detail})"
        )


def recover_folder(folder: Path, deferred: bool = False) -> Leftover | None:
    """Convert (or remove, when it cannot be) a raw capture left in `folder`. `deferred`:
    a soak left it to convert during the off-hold (run.json does not get `recovered`)."""
    raw = folder / rundir.CAPTURE_RAW
    if raw.is_symlink() or not raw.is_file() or is_locked(folder):
        return None
    size = raw.stat().st_size
    if (folder / rundir.CAPTURE).exists():
        raw.unlink()
        return Leftover(folder, "removed", f"{size} bytes, capture.sr already written")
    try:
        run = rundir.read_run(folder)
    except ArtifactError as e:
        raw.unlink()
        return Leftover(folder, "removed", f"{size} bytes, run.json unreadable: {e}")
    cap = run.capture
    channels = cap.channels if cap else None
    rate = cap.samplerate_hz if cap else None
    unitsize = (cap.unitsize if cap else None) or 1
    bits = cap.raw_bits if cap else None
    if (
        cap is None
        or channels is None
        or not 1 <= len(channels) <= 8
        or rate is None
        or not 1 <= unitsize <= 8
        or not (bits is None or _bits_ok(bits, channels, unitsize))
        or (bits is None and unitsize != 1)
    ):
        raw.unlink()
        return Leftover(folder, "removed", f"{size} bytes, run.json states no capture layout")
    # Here, not at the top: every command imports this module (rig/commands/common.py),
    # and `rig <command> --help` needs no numpy.
    from rig.artifacts.srzip import convert_binary

    samples = convert_binary(raw, folder / rundir.CAPTURE, channels, rate, unitsize, bits)
    raw.unlink()
    cap.samples = samples
    if not deferred:
        cap.recovered = True
    rundir.write_run(folder, run)
    return Leftover(folder, "converted", f"{samples} samples into capture.sr")


def _bits_ok(bits: object, channels: list[str], unitsize: int) -> bool:
    return (
        isinstance(bits, list)
        and len(bits) == len(channels)
        and all(isinstance(b, int) and 0 <= b < 8 * unitsize for b in bits)
    )


def recover_results(results_dir: Path) -> list[Leftover]:
    """Every leftover raw capture under a results folder (runs and soak cycles)."""
    out: list[Leftover] = []
    for pattern in (f"*/{rundir.CAPTURE_RAW}", f"*/*/{rundir.CAPTURE_RAW}"):
        for raw in sorted(results_dir.glob(pattern)):
            if (r := recover_folder(raw.parent)) is not None:
                out.append(r)
    return out
