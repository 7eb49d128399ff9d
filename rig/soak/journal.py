"""The soak journal: an append-only JSON-lines file, fsynced line by line: a header,
then a line per cycle and `resume`, `interrupted` and `end` lines. A crash loses at most
the cycle in flight; a torn last line is cut off on reopening. One process writes a
journal at a time (an advisory lock the kernel drops on death).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from pathlib import Path

from rig.artifacts.atomic import fsync_dir
from rig.errors import ArtifactError, RigError
from rig.model.codec import JSONObject, dump
from rig.model.soak import HEADER, HeaderRecord, Record, record_from_json
from rig.names import JOURNAL
from rig.untrusted import Refused, parse_json

SCHEMA = "bootrig.soak/1"


def read_records(path: Path) -> tuple[list[Record], int]:
    """The lines as records (rig.model.soak), and the byte length of the intact part.
    A line that is JSON but does not fit its record is an error naming the file, the
    line and the key, even the last one: it is not torn, and reopening must not cut it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ArtifactError(f"{path}: no soak journal here") from None
    lines = data.split(b"\n")
    lines.pop()  # b"" after the last newline, or a line torn by a crash: not a record
    objs: list[tuple[int, JSONObject]] = []
    good = 0
    for i, line in enumerate(lines, 1):
        try:
            obj = parse_json(line)  # strict and bounded (rig.untrusted)
            if not isinstance(obj, dict) or "type" not in obj:
                raise ValueError("not a journal record")
        except Refused as e:  # whole, but JSON the rig never writes: not torn, never cut
            raise ArtifactError(f"{path}:{i}: bad journal line ({e})") from None
        except ValueError as e:
            if i == len(lines):
                break  # a last line garbled by a crash (e.g. NULs after power loss)
            raise ArtifactError(f"{path}:{i}: bad journal line ({e})") from None
        objs.append((i, obj))
        good += len(line) + 1
    if not objs or objs[0][1].get("type") != HEADER:
        raise ArtifactError(f"{path}:1: expected a header line with schema {SCHEMA!r}")
    if objs[0][1].get("schema") != SCHEMA:
        found = objs[0][1].get("schema")
        raise ArtifactError(f"{path}:1: key 'schema': expected {SCHEMA!r}, found {found!r}")
    records = []
    for i, obj in objs:
        try:
            records.append(record_from_json(obj))
        except ArtifactError as e:
            raise ArtifactError(f"{path}:{i}: bad journal line ({e})") from None
    return records, good


def read_header(path: Path) -> HeaderRecord:
    """Line 1: what the soak is."""
    head = read_records(path)[0][0]
    assert isinstance(head, HeaderRecord)  # read_records accepts no other first line
    return head


class Journal:
    """Append records durably; `with Journal.create(...)` or `Journal.reopen(...)`."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def _open(cls, path: Path, flags: int) -> Journal:
        try:
            fd = os.open(path, flags | os.O_WRONLY | os.O_APPEND, 0o644)
        except OSError as e:
            raise ArtifactError(f"{path}: cannot open: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ArtifactError(f"{path}: another `rig soak` is writing this journal") from None
        return cls(path, fd)

    @classmethod
    def create(cls, folder: Path, header: HeaderRecord) -> Journal:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / JOURNAL
        journal = cls._open(path, os.O_CREAT | os.O_EXCL)
        journal.append(header)
        fsync_dir(folder)  # the new file's name is durable too
        return journal

    @classmethod
    def reopen(cls, folder: Path) -> tuple[Journal, list[Record], int]:
        """Open for appending; returns the records and how many torn bytes were cut."""
        path = folder / JOURNAL
        journal = cls._open(path, 0)  # lock first: nobody else may be appending
        try:
            records, good = read_records(path)
            cut = path.stat().st_size - good
            if cut:
                os.truncate(path, good)
                os.fsync(journal._fd)
        except BaseException:
            journal.close()
            raise
        return journal, records, cut

    def append(self, record: Record) -> None:
        data = (json.dumps(dump(record), separators=(",", ":"), allow_nan=False) + "\n").encode()
        try:
            n = os.write(self._fd, data)
            if n != len(data):
                # A full disk took part of the line, without an error: cut it, or the
                # next line would follow it and leave a bad line mid-journal.
                os.ftruncate(self._fd, os.fstat(self._fd).st_size - n)
                raise OSError(errno.ENOSPC, f"only {n} of {len(data)} bytes written")
            os.fsync(self._fd)
        except OSError as e:
            raise RigError(f"{self.path}: cannot append: {e.strerror or e}") from None

    def close(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # also drops the lock
            self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
