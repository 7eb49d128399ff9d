"""The outage spool: reports the server did not acknowledge, kept durably under results/
(docs/influxdb.md, "Outage: the spool"), one fsynced file per boot, named to sort in
replay order. Replaying is idempotent (every point time is fixed): removal needs no fsync.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.artifacts import atomic
from rig.untrusted import parse_json

SPOOL_DIR = ".influx-spool"
MAGIC = b"#bootrig-spool/1 "
SUFFIX = ".lp"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def spool_dir(results_dir: Path) -> Path:
    return Path(results_dir) / SPOOL_DIR


@dataclass(frozen=True)
class Entry:
    path: Path
    header: dict[str, Any]
    body: bytes
    inode: int

    @property
    def points(self) -> int:
        return int(self.header.get("points", 0))


def _write(path: Path, header: dict[str, Any], body: bytes) -> None:
    data = MAGIC + json.dumps(header).encode() + b"\n" + body
    atomic.write_bytes(path, data, sync_dir=True)  # fsynced, and the folder too


class Spool:
    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory)

    def name_for(self, time_ns: int, run_id: str | None) -> str:
        slug = _UNSAFE.sub("_", run_id or "boot")[:80]
        return f"{time_ns:019d}-{slug}{SUFFIX}"

    def put(self, time_ns: int, run_id: str | None, lines: list[str], meta: dict[str, Any]) -> Path:
        """Store one boot's lines durably; returns only once they are on disk."""
        self.dir.mkdir(parents=True, exist_ok=True)
        header = {"run_id": run_id, "points": len(lines), "attempts": 1, **meta}
        path = self.dir / self.name_for(time_ns, run_id)
        _write(path, header, "\n".join(lines).encode() + b"\n")
        return path

    def paths(self) -> list[Path]:
        if not self.dir.is_dir():
            return []
        return sorted(p for p in self.dir.iterdir() if p.name.endswith(SUFFIX))

    def read(self, path: Path) -> Entry:
        """One entry; an unreadable file raises ValueError and is left where it is."""
        with path.open("rb") as f:
            inode = os.fstat(f.fileno()).st_ino
            data = f.read()
        first, _, body = data.partition(b"\n")
        if not first.startswith(MAGIC):
            raise ValueError(f"{path.name}: not a bootrig spool file")
        try:
            header = parse_json(first[len(MAGIC) :])
        except ValueError as e:
            raise ValueError(f"{path.name}: bad spool header: {e}") from None
        return Entry(path, header, body.rstrip(b"\n"), inode)

    def remove(self, entry: Entry) -> None:
        """Remove an acknowledged entry, unless it was replaced since it was read."""
        try:
            if os.stat(entry.path).st_ino == entry.inode:
                entry.path.unlink()
        except FileNotFoundError:
            pass

    def mark_failed(self, entry: Entry, reason: str, kind: str, when_utc: str) -> None:
        """Keep the server's reason on a rejected entry (it stays: a boot is never dropped)."""
        header = {
            **entry.header,
            "reason": reason,
            "kind": kind,
            "attempts": int(entry.header.get("attempts", 1)) + 1,
            "last_attempt_utc": when_utc,
        }
        if os.stat(entry.path).st_ino == entry.inode:
            _write(entry.path, header, entry.body)

    @contextlib.contextmanager
    def draining(self) -> Iterator[bool]:
        """An exclusive replay lock; yields False when another process is replaying."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with (self.dir / ".lock").open("a") as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    def depth(self) -> dict[str, Any]:
        """What `rig influx status` shows: files, points, oldest, and the rejected ones."""
        paths = self.paths()
        points, rejected, unreadable = 0, [], []
        by_kind: dict[str, int] = {}
        for p in paths:
            try:
                e = self.read(p)
            except (OSError, ValueError) as err:
                unreadable.append({"file": p.name, "reason": str(err)})
                continue
            points += e.points
            kind = str(e.header.get("kind", "unknown"))
            by_kind[kind] = by_kind.get(kind, 0) + 1
            if kind == "rejected":
                rejected.append({"file": p.name, "reason": e.header.get("reason")})
        return {
            "dir": str(self.dir),
            "reports": len(paths),
            "points": points,
            "oldest": paths[0].name if paths else None,
            "by_kind": by_kind,
            "rejected": rejected,
            "unreadable": unreadable,
        }
