"""Whole-or-nothing file writes that cannot be redirected: the temporary file is
created fresh under a random name with O_EXCL (a fixed `.part` name would follow a
planted symlink), then renamed over the target, replacing a symlink there instead of
writing through it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

#: What the written files are given (mkstemp's 0600 would hide reports from the group).
MODE = 0o644


def fsync_dir(path: Path) -> None:
    """Make a rename in `path` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_open(
    path: Path, mode: str = "w", durable: bool = True, sync_dir: bool = False
) -> Iterator[IO[Any]]:
    """`with atomic_open(p) as f: f.write(...)`: `p` has all of it or what it had before.
    `durable`: fsync the file (evidence; off for derived pages). `sync_dir`: also fsync
    the folder, so the new name survives a power cut (the spool: a few ms a write)."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None
    try:
        kw: dict[str, Any] = {} if "b" in mode else {"encoding": "utf-8"}
        with os.fdopen(fd, mode, **kw) as f:
            os.fchmod(f.fileno(), MODE)
            yield f
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:  # a full disk, a quota: name the file it cost
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OSError(e.errno, e.strerror, str(path)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync_dir:
        fsync_dir(path.parent)


def write_bytes(path: Path, data: bytes, durable: bool = True, sync_dir: bool = False) -> None:
    with atomic_open(path, "wb", durable, sync_dir) as f:
        f.write(data)


def write_text(path: Path, text: str, durable: bool = True) -> None:
    with atomic_open(path, "w", durable) as f:
        f.write(text)
