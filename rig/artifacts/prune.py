"""`rig prune`: find the boots of a results folder and delete what the retention rule
(`rig.artifacts.retention`, docs/disk.md) lets go. The walk never follows a symlink nor
enters a hidden folder, skips a run measuring now, and deletes only regular files
directly inside a run folder."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rig.artifacts.leftovers import is_locked
from rig.artifacts.retention import RECORD, Boot, Window, deletable, outside, read_boot
from rig.artifacts.rundir import REPORT, RUN
from rig.errors import InputError
from rig.names import JOURNAL


@dataclass
class Removal:
    path: Path
    bytes: int
    kind: str  # "derived" or "raw"


@dataclass
class Plan:
    """What a prune deletes (or, on a dry run, would delete) and what it keeps."""

    results: Path
    window: Window
    raw: bool
    boots: list[Boot] = field(default_factory=list)
    outside: list[Boot] = field(default_factory=list)
    removals: list[Removal] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.removals)

    @property
    def protected(self) -> list[Boot]:
        """Boots outside the window whose raw artifacts stay, and why."""
        return [b for b in self.outside if b.keep_raw is not None]

    def to_json(self, dry_run: bool) -> dict[str, Any]:
        return {
            "results": str(self.results),
            "dry_run": dry_run,
            "raw": self.raw,
            "older_than_s": self.window.older_than_s,
            "keep_last": self.window.keep_last,
            "boots": len(self.boots),
            "in_window": len(self.boots) - len(self.outside),
            "outside_window": len(self.outside),
            "files": [
                {"path": str(r.path), "bytes": r.bytes, "kind": r.kind} for r in self.removals
            ],
            "bytes_freed": self.bytes,
            "raw_kept": [{"folder": str(b.folder), "reason": b.keep_raw} for b in self.protected],
            "skipped": [{"path": str(p), "reason": why} for p, why in self.skipped],
        }


def _is_file(folder: Path, name: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(folder / name).st_mode)
    except OSError:
        return False


def _is_run(folder: Path) -> bool:
    return any(_is_file(folder, n) for n in RECORD)


def _subfolders(folder: Path, skipped: list[tuple[Path, str]]) -> list[Path]:
    """Visible real subfolders; symlinks to folders are noted and not followed."""
    out = []
    with os.scandir(folder) as it:
        for entry in it:
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                if os.path.isdir(entry.path):
                    skipped.append((Path(entry.path), "symlink: not followed"))
                continue
            if entry.is_dir(follow_symlinks=False):
                out.append(Path(entry.path))
    return sorted(out)


def find_runs(results: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The run folders of a results folder (its runs and its soaks' cycles) or of one
    soak folder."""
    if results.is_symlink() and not results.is_dir():
        raise InputError(f"{results}: not a folder")
    if not results.is_dir():
        raise InputError(f"{results}: no such folder (expected a results folder)")
    if _is_run(results):
        raise InputError(
            f"{results}: this is one run's folder ({RUN}/{REPORT} in it), not a results "
            f"folder; give the folder holding the run folders (e.g. {results.parent})"
        )
    skipped: list[tuple[Path, str]] = []
    top = _subfolders(results, skipped)
    soaks = [results] if _is_file(results, JOURNAL) else []
    soaks += [d for d in top if _is_file(d, JOURNAL)]
    runs = [d for d in top if _is_run(d)]
    for soak in soaks:
        runs += [d for d in _subfolders(soak, skipped) if _is_run(d)]
    if not runs and not soaks:
        raise InputError(
            f"{results}: not a results folder (no {RUN} in a run folder and no soak "
            f"{JOURNAL} below it); nothing pruned"
        )
    return sorted(set(runs)), skipped


def plan(results: Path, window: Window, raw: bool, now: datetime) -> Plan:
    results = Path(os.path.abspath(results))
    runs, skipped = find_runs(results)
    p = Plan(results, window, raw, skipped=skipped)
    for folder in runs:
        if is_locked(folder):
            p.skipped.append((folder, "a run is measuring in it now (.lock held)"))
            continue
        try:
            boot = read_boot(folder)
        except OSError as e:
            p.skipped.append((folder, f"cannot be read: {e.strerror or e}"))
            continue
        p.boots.append(boot)
        p.skipped += [(folder / n, "symlink: not followed") for n in boot.links]
    p.outside = outside(p.boots, window, now)
    for boot in p.outside:
        p.removals += [
            Removal(boot.folder / name, boot.files[name], kind)
            for name, kind in deletable(boot, raw)
        ]
    return p


def execute(p: Plan) -> list[tuple[Path, str]]:
    """Delete the plan's files, each checked again right before; (path, error) for each
    that could not be."""
    errors = []
    for r in p.removals:
        try:
            if not stat.S_ISREG(os.lstat(r.path).st_mode):
                errors.append((r.path, "no longer a regular file: left alone"))
                continue
            os.unlink(r.path)
        except FileNotFoundError:
            continue  # gone already: nothing to free, nothing lost
        except OSError as e:
            errors.append((r.path, e.strerror or str(e)))
    return errors
