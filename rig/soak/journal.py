"""The soak journal: an append-only JSON-lines file, fsynced line by line.

Line 1 is the header (what the soak is: config, board, limits); then one line per
cycle, plus `resume`, `interrupted` and `end` lines. A line is on disk before the next
cycle powers the board on, so a crash (or SIGKILL) loses at most the cycle in flight.
A torn last line (the crash hit mid-write) is cut off when the journal is reopened.
One process writes a journal at a time (an advisory lock the kernel drops on death).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any

from rig.artifacts.atomic import fsync_dir
from rig.errors import ArtifactError

SCHEMA = "bootrig.soak/1"
JOURNAL = "journal.jsonl"


class JournalError(ArtifactError, RuntimeError):
    """The journal cannot be read or written; the message names the file and why."""


def read_journal(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The records, and the byte length of the intact part (a torn tail excluded)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise JournalError(f"{path}: no soak journal here") from None
    lines = data.split(b"\n")
    lines.pop()  # b"" after the last newline, or a line torn by a crash: not a record
    records: list[dict[str, Any]] = []
    good = 0
    for i, line in enumerate(lines, 1):
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict) or "type" not in rec:
                raise ValueError("not a journal record")
        except ValueError as e:
            if i == len(lines):
                break  # a last line garbled by a crash (e.g. NULs after power loss)
            raise JournalError(f"{path}:{i}: bad journal line ({e})") from None
        records.append(rec)
        good += len(line) + 1
    if not records or records[0].get("type") != "header":
        raise JournalError(f"{path}:1: expected a header line with schema {SCHEMA!r}")
    if records[0].get("schema") != SCHEMA:
        found = records[0].get("schema")
        raise JournalError(f"{path}:1: key 'schema': expected {SCHEMA!r}, found {found!r}")
    return records, good


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
            raise JournalError(f"{path}: cannot open: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise JournalError(f"{path}: another `rig soak` is writing this journal") from None
        return cls(path, fd)

    @classmethod
    def create(cls, folder: Path, header: dict[str, Any]) -> Journal:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / JOURNAL
        journal = cls._open(path, os.O_CREAT | os.O_EXCL)
        journal.append({"type": "header", "schema": SCHEMA, **header})
        fsync_dir(folder)  # the new file's name is durable too
        return journal

    @classmethod
    def reopen(cls, folder: Path) -> tuple[Journal, list[dict[str, Any]], int]:
        """Open for appending; returns the records and how many torn bytes were cut."""
        path = folder / JOURNAL
        journal = cls._open(path, 0)  # lock first: nobody else may be appending
        try:
            records, good = read_journal(path)
            cut = path.stat().st_size - good
            if cut:
                os.truncate(path, good)
                os.fsync(journal._fd)
        except BaseException:
            journal.close()
            raise
        return journal, records, cut

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n"
        try:
            os.write(self._fd, line.encode("utf-8"))
            os.fsync(self._fd)
        except OSError as e:
            raise JournalError(f"{self.path}: cannot append: {e.strerror or e}") from None

    def close(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # also drops the lock
            self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
