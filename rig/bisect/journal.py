"""The bisect journal: JSON lines, fsynced one by one: the header (what the search is),
then a `step` line per commit whose build or boots are done. `--resume` boots only what
no line holds yet; a torn last line (a kill mid-write) is dropped and cut."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rig.artifacts.atomic import fsync_dir
from rig.errors import ArtifactError, InputError, RigError
from rig.names import JOURNAL

SCHEMA = "bootrig.bisect/1"


@dataclass(frozen=True)
class Header:
    repo: str
    commits: list[str]  # [good, ..., bad], full ids
    build: list[str]
    sets: list[str]
    config: str
    stage: str
    alpha: float
    end_boots: int
    batch: int
    max_boots: int
    build_timeout_s: float
    interleave: bool = True  # boot the ends again beside each step where that is cheap


@dataclass
class StepRecord:
    index: int
    commit: str
    role: str  # "good_end", "bad_end" or "step"
    build: str  # "ok" or why it failed
    times: list[float] = field(default_factory=list)  # the stage, seconds, boots that count
    failed: list[list[str]] = field(default_factory=list)  # [run id, outcome or reason]
    verdict: str | None = None  # GOOD, BAD, SKIP or UNDECIDED (None for an end)
    p: float | None = None
    decision: dict[str, Any] | None = None  # rig.bisect.decide.Step.to_json()
    ref: dict[str, list[float]] = field(default_factory=dict)  # "good"/"bad": the ends
    # booted again beside this step (interleaved), seconds of boots that count


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, folder: Path, header: Header) -> Journal:
        folder.mkdir(parents=True, exist_ok=True)
        j = cls(folder / JOURNAL)
        j._append({"type": "header", "schema": SCHEMA, **asdict(header)})
        fsync_dir(folder)
        return j

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One `rig bisect` at a time on a folder (an advisory lock the kernel drops when
        the process dies, so a killed bisect never blocks its --resume)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as e:
            raise ArtifactError(f"{self.path}: cannot open: {e.strerror or e}") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise InputError(f"{self.path}: another `rig bisect` is running here") from None
            yield
        finally:
            os.close(fd)

    def add(self, step: StepRecord) -> None:
        self._append({"type": "step", **asdict(step)})

    def _append(self, obj: dict[str, Any]) -> None:
        data = (json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n").encode()
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            raise RigError(f"{self.path}: cannot append: {e.strerror or e}") from None


def read(folder: Path) -> tuple[Journal, Header, dict[int, StepRecord]]:
    """The journal of a bisect folder, its header and its steps by commit index."""
    path = folder / JOURNAL
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ArtifactError(f"{path}: no bisect journal here ({e.strerror or e})") from None
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" after the last newline, or a torn line
    if tail:
        os.truncate(path, len(data) - len(tail))
    header: Header | None = None
    steps: dict[int, StepRecord] = {}
    for i, line in enumerate(lines, 1):
        try:
            obj = json.loads(line)
            kind = obj.pop("type")
            if i == 1:
                if kind != "header" or obj.pop("schema") != SCHEMA:
                    raise ValueError(f"expected a header line with schema {SCHEMA!r}")
                header = Header(**obj)
            elif kind == "step":
                step = StepRecord(**obj)
                steps[step.index] = step
            else:
                raise ValueError(f"unknown record type {kind!r}")
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise ArtifactError(f"{path}:{i}: bad journal line ({e})") from None
    if header is None:
        raise ArtifactError(f"{path}:1: expected a header line with schema {SCHEMA!r}")
    return Journal(path), header, steps
