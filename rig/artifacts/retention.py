"""What `rig prune` may delete from a boot's folder, and what it must keep (docs/disk.md):
the record (`RECORD`) always stays, derived files (`DERIVED`) may go outside the
retention window, the raw measurement (`RAW`) only with `--raw` and only for a boot its
record proves fine (`keep_raw_reason`); files of any other name are someone's notes."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

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
from rig.errors import ArtifactError
from rig.model import Report, Run
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
