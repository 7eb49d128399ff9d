"""The artifact folder (docs/contract.md): run.json, console.jsonl, console.log,
report.json; all analysis needs, so `rig analyze DIR` works anywhere, later."""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rig.artifacts.atomic import atomic_open
from rig.errors import ArtifactError, ConfigError, RigError
from rig.model import Chunk, Report, Run
from rig.untrusted import Refused, check_regular, parse_json, read_json_file, read_line

RUN = "run.json"
CONSOLE_JSONL = "console.jsonl"
CONSOLE_LOG = "console.log"
CAPTURE = "capture.sr"
CAPTURE_RAW = "capture.bin"
REPORT = "report.json"
REPORT_HTML = "report.html"
TRUTH = "truth.json"


def new_run_id(now: datetime | None = None) -> str:
    """`YYYYmmddTHHMMSSZ-xxxxyy`: UTC second, its fraction in 1/65536 s (ids sort by
    time within a second too) and 2 random hex digits (two rigs in the same 15 µs)."""
    return _run_id(now or datetime.now(UTC), secrets.randbelow(256))


def _run_id(now: datetime, tail: int) -> str:
    frac = now.microsecond * 65536 // 1_000_000
    return now.strftime("%Y%m%dT%H%M%S") + f"Z-{frac:04x}{tail:02x}"


def new_run_folder(
    results_dir: Path, now: datetime | None = None, prefix: str = ""
) -> tuple[str, Path]:
    """A new run id and its folder (`prefix` + id), created: on a collision the next free
    tail is taken."""
    now = now or datetime.now(UTC)
    first = secrets.randbelow(256)
    for k in range(256):
        run_id = _run_id(now, (first + k) % 256)
        folder = results_dir / (prefix + run_id)
        try:
            folder.mkdir(parents=True)
        except FileExistsError:
            continue
        return run_id, folder
    raise ArtifactError(f"{results_dir}: no free run id for {_run_id(now, 0)[:21]}..")


#: Less free space than this in results_dir and a run could not even keep its console
#: and report: refused before any instrument starts.
MIN_FREE_BYTES = 32 << 20


def probe_results_dir(results_dir: Path, key: str = "rig.results_dir") -> None:
    """Create `results_dir` and prove it takes a file before any instrument starts:
    found only after the boot, it would lose the boot."""
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=results_dir, prefix=".probe-") as f:
            f.write(b"bootrig")
            f.flush()
            os.fsync(f.fileno())
        st = os.statvfs(results_dir)
    except OSError as e:
        raise ConfigError(f"{key}: {results_dir} cannot hold the runs: {e.strerror or e}") from None
    free = st.f_bavail * st.f_frsize
    if free < MIN_FREE_BYTES:
        raise RigError(
            f"disk: {results_dir} has {free >> 20} MB free, less than the "
            f"{MIN_FREE_BYTES >> 20} MB a run needs for its console and report"
        )


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def write_json(path: Path, obj: Any) -> None:
    """Write atomically and durably: a crash leaves the old file or the new, never half."""
    with atomic_open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


#: A run.json or report.json larger than this is not one: a boot of 100,000 lines; parsed,
#: 32 MiB of hostile JSON (empty arrays) takes about 1 GB.
MAX_JSON_BYTES = 32 << 20


def read_json(path: Path) -> dict[str, Any]:
    """A run.json or report.json as plain data: strict, bounded JSON (rig.untrusted)."""
    obj = read_json_file(path, MAX_JSON_BYTES)
    if not isinstance(obj, dict):
        raise ArtifactError(f"{path}: expected a JSON object at the top level")
    return obj


def read_run(folder: Path) -> Run:
    """run.json as a Run; an error names the file and the key that does not fit."""
    path = folder / RUN
    obj = read_json(path)
    try:
        run = Run.from_json(obj)
    except ArtifactError as e:
        raise ArtifactError(f"{path}: {e}") from None
    return run  # its config snapshot is read by rig.config.snapshot, with the config's rules


def write_run(folder: Path, run: Run) -> None:
    write_json(folder / RUN, run.to_json())


def read_report(path: Path) -> Report:
    """A report.json (`path`: the file) as a Report, naming the key that does not fit."""
    obj = read_json(path)  # its errors name the file already
    try:
        return Report.from_json(obj)
    except ArtifactError as e:
        raise ArtifactError(f"{path}: {e}") from None


def dumps_records(obj: Any, depth: int = 2, _level: int = 0) -> str:
    """JSON indented down to `depth` levels, each value below on one line: report.json's
    layout, one stage, event or initcall a line (a fifth smaller than indent=2)."""
    if _level >= depth or not isinstance(obj, dict | list) or not obj:
        return json.dumps(obj)
    pad, end = "  " * (_level + 1), "  " * _level
    if isinstance(obj, dict):
        items = [
            f"{pad}{json.dumps(k)}: {dumps_records(v, depth, _level + 1)}" for k, v in obj.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{end}}}"
    items = [pad + dumps_records(v, depth, _level + 1) for v in obj]
    return "[\n" + ",\n".join(items) + f"\n{end}]"


def write_report(path: Path, report: Report) -> None:
    """report.json, atomically and durably, one record a line (`dumps_records`)."""
    with atomic_open(path, "w") as f:
        f.write(dumps_records(report.to_json()) + "\n")


def read_console(folder: Path) -> list[Chunk]:
    """Read console.jsonl; a bad record is an error naming the file and line. A last
    record cut short (no newline) is what a crash leaves: the records before it count."""
    path = folder / CONSOLE_JSONL
    chunks: list[Chunk] = []
    if not check_regular(path):
        return chunks
    try:
        f = path.open("rb")
    except OSError as e:
        raise ArtifactError(f"{path}: cannot be read: {e.strerror or e}") from None
    with f:
        lineno = 0
        while line := read_line(f, f"{path}:{lineno + 1}"):
            lineno += 1
            if not line.strip():
                continue
            if not line.endswith(b"\n") and not _whole_record(line):
                break  # torn tail
            try:
                rec = parse_json(line)
                t_ns = rec["t_ns"]
                data = base64.b64decode(rec["data_b64"], validate=True)
            except binascii.Error as e:
                raise ArtifactError(f"{path}:{lineno}: key 'data_b64': bad base64 ({e})") from None
            except ValueError as e:  # not strict JSON (rig.untrusted): say why
                raise ArtifactError(f"{path}:{lineno}: bad console record ({e})") from None
            except (KeyError, TypeError) as e:
                raise ArtifactError(f"{path}:{lineno}: bad console record ({e!r})") from None
            if not isinstance(t_ns, int):
                raise ArtifactError(f"{path}:{lineno}: key 't_ns': expected integer ns")
            chunks.append(Chunk(t_ns, data))
    return chunks


def _whole_record(line: bytes) -> bool:
    """True unless `line` is cut short: a whole record the strict reader refuses (a NaN,
    a key twice) is no torn tail, and is reported, not dropped."""
    try:
        parse_json(line)
    except Refused:
        return True
    except ValueError:
        return False
    return True


def write_console_log(folder: Path, chunks: list[Chunk]) -> None:
    """console.log is for people: the bytes as text, undecodable bytes shown as \\xNN."""
    text = b"".join(c.data for c in chunks).decode("utf-8", "backslashreplace")
    (folder / CONSOLE_LOG).write_text(text.replace("\r\n", "\n"), encoding="utf-8")
