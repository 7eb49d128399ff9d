"""The soak journal's records (rig.model.soak): every line of a real soak's journal is
read into its record class and written back byte for byte (docs/soak.md is a contract
for outside tools); a line that does not fit names the file, the line and the key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rig.errors import ArtifactError
from rig.model.codec import dump
from rig.model.soak import (
    CycleRecord,
    EndRecord,
    HeaderRecord,
    InterruptedRecord,
    OtherRecord,
    ResumeRecord,
    record_from_json,
)
from rig.names import JOURNAL
from rig.soak.journal import SCHEMA, Journal, read_records
from tests.conftest import REPO
from tests.e2e import interrupt_when, make_config

KEYS = {"boot_s": 1.0, "post_ui_s": 0.02}


def line_of(obj: object) -> bytes:
    """A record's line as rig.soak.journal.Journal.append writes it."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def soak_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "rig.soak", *args, "--json"]


@pytest.fixture(scope="module")
def real_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real soak of every line kind: 2 clean cycles and their end (header, cycle,
    end), then a resume with every boot hanging, stopped by SIGINT mid-boot (resume,
    interrupted, end)."""
    tmp = tmp_path_factory.mktemp("soak")
    clean = make_config(tmp, off_hold_s=0.05, set_keys=KEYS)
    cmd = soak_cmd("--config", str(clean), "--cycles", "2", "--id", "rt")
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert first.returncode == 0, first.stdout + first.stderr
    folder = tmp / "results" / "rt"
    keys = {**KEYS, "boot_s": 10.0}
    hang = make_config(tmp, off_hold_s=0.05, set_keys=keys, extra="\n[sim.faults]\nhang = 1.0\n")
    before = {p.name for p in folder.iterdir() if p.is_dir()}
    cmd = soak_cmd("--resume", str(folder), "--config", str(hang), "--cycles", "4")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    # Once the resumed session's first cycle has begun, and 1 s into its boot (it hangs).
    started = lambda: bool({p.name for p in folder.iterdir() if p.is_dir()} - before)  # noqa: E731
    _, err = interrupt_when(proc, started, 1.0)
    assert proc.returncode == 130, err
    return folder / JOURNAL


@pytest.mark.slow
def test_every_line_of_a_real_journal_round_trips(real_journal: Path) -> None:
    lines = real_journal.read_bytes().splitlines(keepends=True)
    kinds: dict[type, int] = {}
    for i, line in enumerate(lines, 1):
        record = record_from_json(json.loads(line))
        kinds[type(record)] = kinds.get(type(record), 0) + 1
        assert line_of(dump(record)) == line, f"line {i}"
        assert not getattr(record, "extra", {}), f"line {i}: keys the model does not know"
    assert kinds == {
        HeaderRecord: 1,
        CycleRecord: 2,
        EndRecord: 2,
        ResumeRecord: 1,
        InterruptedRecord: 1,
    }
    records, good = read_records(real_journal)
    assert [type(r) for r in records] == [
        HeaderRecord,
        CycleRecord,
        CycleRecord,
        EndRecord,
        ResumeRecord,
        InterruptedRecord,
        EndRecord,
    ]
    assert good == real_journal.stat().st_size
    head, cycle, resume, cut = records[0], records[1], records[4], records[5]
    assert isinstance(head, HeaderRecord) and head.soak_id == "rt" and head.cycles == 2
    assert isinstance(cycle, CycleRecord) and cycle.outcome == "ok" and cycle.session == 1
    assert cycle.stages["kernel"] is not None and cycle.detail is None
    assert isinstance(resume, ResumeRecord) and resume.session == 2 and resume.cut_bytes == 0
    assert isinstance(cut, InterruptedRecord) and cut.cycle == 3


def test_keys_written_only_sometimes_and_unknown_ones_round_trip() -> None:
    rec = {
        "type": "cycle",
        "cycle": 4,
        "run_id": "20250101T000004Z-abcdef",
        "session": 2,
        "t_ns": None,
        "outcome": "rig_error",
        "power_to_ui_s": None,
        "stages": {},
        "influx": "none",
        "wall_s": None,
        "off_hold_s": None,
        "boot_s": None,
        "overhead_s": None,
        "hold_work_s": None,
        "detail": "no run.json: the rig stopped before the board was powered",
        "recovered": True,
        "rss_kb": None,
        "utc": "2025-01-01T00:00:04Z",
        "elapsed_s": 4.5,
        "from_a_newer_rig": [1],
    }
    back = dump(record_from_json(rec))
    assert line_of(back) == line_of(rec)
    other = {"type": "pause", "session": 2, "why": "lunch"}
    kept = record_from_json(other)
    assert isinstance(kept, OtherRecord) and line_of(dump(kept)) == line_of(other)
    end = {"type": "end", "reason": "aborted", "utc": "2025-01-01T00:00:05Z"}  # after a raise
    assert line_of(dump(record_from_json(end))) == line_of(end)


def _journal(tmp: Path, *lines: bytes) -> Path:
    folder = tmp / "soak"
    Journal.create(folder, HeaderRecord(schema=SCHEMA, soak_id="s")).close()
    with (folder / JOURNAL).open("ab") as f:
        f.write(b"".join(lines))
    return folder / JOURNAL


def test_a_line_that_does_not_fit_names_file_line_and_key(tmp_path: Path) -> None:
    good = line_of({"type": "cycle", "cycle": 1, "run_id": "a", "outcome": "ok", "stages": {}})
    bad = line_of({"type": "cycle", "cycle": "2", "run_id": "b", "outcome": "ok", "stages": {}})
    path = _journal(tmp_path, good, bad, line_of({"type": "end", "reason": "completed"}))
    with pytest.raises(ArtifactError) as e:
        read_records(path)
    assert str(e.value) == (
        f"{path}:3: bad journal line (key 'cycle': expected an integer >= 1, found \"2\")"
    )


def test_a_missing_key_and_a_last_line_that_is_json_are_errors(tmp_path: Path) -> None:
    path = _journal(tmp_path, line_of({"type": "interrupted", "cycle": 1}))
    with pytest.raises(ArtifactError, match=r"journal\.jsonl:2: .*missing key 'run_id'"):
        read_records(path)  # complete JSON is no torn write: it must not be cut
    with pytest.raises(ArtifactError, match=r"journal\.jsonl:2: bad journal line"):
        Journal.reopen(path.parent)
    assert path.read_bytes().endswith(b'"cycle":1}\n')


def test_a_torn_last_line_is_still_no_record(tmp_path: Path) -> None:
    end = line_of({"type": "end", "reason": "completed"})
    path = _journal(tmp_path, end, b"\x00\x00\x00\n")
    records, good = read_records(path)
    assert [type(r) for r in records] == [HeaderRecord, EndRecord]
    assert good == path.stat().st_size - 4
