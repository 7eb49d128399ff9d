"""`rig prune`: find the boots of a results folder and delete what the retention rule lets
go (docs/disk.md): the record (`RECORD`) always stays, derived files (`DERIVED`) may go
outside the retention window, the raw measurement (`RAW`) only with `--raw` and only for a
boot its record proves fine (`keep_raw_reason`); files of any other name are someone's
notes. The walk never follows a symlink nor enters a hidden folder, skips a run measuring
now, and deletes only regular files directly inside a run folder."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from rig.artifacts.leftovers import is_locked
from rig.artifacts.rundir import (
    CAPTURE,
    CAPTURE_RAW,
    CONSOLE_JSONL,
    CONSOLE_LOG,
    MAX_JSON_BYTES,
    REPORT,
    REPORT_HTML,
    RUN,
    TRUTH,
)
from rig.errors import ArtifactError, InputError
from rig.model import Report, Run
from rig.names import JOURNAL
from rig.outcomes import Outcome
from rig.untrusted import check_regular, load_json

UART_BIN = "uart.bin"
DERIVED = (REPORT_HTML, UART_BIN)
RAW = (
    CAPTURE,
    CAPTURE_RAW,
    CONSOLE_JSONL,
    CONSOLE_LOG,
    "power.jsonl",
    TRUTH,
    "qemu-trace.log",
    "qemu.json",
)
RECORD = (RUN, REPORT)
T = TypeVar("T")


@dataclass
class Boot:
    """One run folder as prune sees it."""

    folder: Path
    started: datetime  # from run.json, else report.json, else the folder's mtime
    keep_raw: str | None  # why its raw artifacts must stay; None: provably fine
    files: dict[str, int] = field(default_factory=dict)  # name -> bytes, regular files
    links: list[str] = field(default_factory=list)  # symlinks in the folder: never touched


def _read(path: Path, read: Callable[[Any], T]) -> tuple[T | None, str | None]:
    """The file as `read` types its JSON, or None and why not (never follows a symlink,
    never reads a file that is not regular or is absurdly large)."""
    try:
        if not check_regular(path, MAX_JSON_BYTES, follow=False):
            return None, f"no {path.name}"
        with open(path, "rb") as f:
            doc = load_json(f.read(), str(path))
    except ArtifactError as e:  # not a regular file, larger than any report, not JSON
        return None, str(e)
    except (OSError, ValueError) as e:
        return None, f"{path.name} unreadable: {e}"
    try:
        return read(doc), None
    except Exception as e:  # whatever the reason, a record not read proves nothing
        return None, f"{path.name} unreadable ({e})"


def keep_raw_reason(
    run: Run | None, run_error: str | None, report: Report | None, error: str | None
) -> str | None:
    """Why a boot's raw artifacts must be kept, or None when its report proves it fine."""
    if error is not None or report is None:
        return f"{error}: cannot show the boot was fine"
    if run_error is not None or run is None:
        return f"{run_error}: the run's record is incomplete"
    if report.outcome != Outcome.OK:
        return f"outcome {report.outcome}"
    if report.analysis.invalid:
        return f"analysis.invalid: {'; '.join(map(str, report.analysis.invalid))}"
    # The model reads true_cold_boot as true, false or null; anything else is unreadable.
    if report.not_cold:
        return "flagged: not a true cold boot (cold_boot.true_cold_boot false)"
    if run.rig_error or run.aborted:
        return f"{RUN} records {'a rig error' if run.rig_error else 'an abort'}"
    return None


def _utc(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def read_boot(folder: Path) -> Boot:
    """A run folder's files (lstat: symlinks are listed apart and never followed), its
    start time and whether its raw artifacts may go."""
    files: dict[str, int] = {}
    links: list[str] = []
    with os.scandir(folder) as it:
        for entry in it:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                links.append(entry.name)
            elif stat.S_ISREG(st.st_mode):
                files[entry.name] = st.st_size
    run, run_error = _read(folder / RUN, Run.from_json)
    report, error = _read(folder / REPORT, Report.from_json)
    started = _utc(run.started_utc if run else None)
    started = started or _utc(report.started_utc if report else None)
    if started is None:
        started = datetime.fromtimestamp(os.lstat(folder).st_mtime, UTC)
    reason = keep_raw_reason(run, run_error, report, error)
    return Boot(folder, started, reason, files, links)


@dataclass(frozen=True)
class Window:
    """Boots inside the window are kept whole: those started less than `older_than_s`
    ago, and the `keep_last` newest of the results folder."""

    older_than_s: float
    keep_last: int = 0


def outside(boots: list[Boot], window: Window, now: datetime) -> list[Boot]:
    """The boots outside the retention window, oldest first."""
    newest = sorted(boots, key=lambda b: (b.started, b.folder.name), reverse=True)
    kept = {id(b) for b in newest[: window.keep_last]}
    return [
        b
        for b in reversed(newest)
        if id(b) not in kept and (now - b.started).total_seconds() >= window.older_than_s
    ]


def deletable(boot: Boot, raw: bool) -> list[tuple[str, str]]:
    """(file name, kind) this boot, outside the window, may lose: its derived files,
    and with `raw` its raw artifacts unless it must keep them."""
    out = [(n, "derived") for n in DERIVED if n in boot.files]
    if raw and boot.keep_raw is None:
        out += [(n, "raw") for n in RAW if n in boot.files]
    return out


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
