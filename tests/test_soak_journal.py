"""The soak journal: fsynced lines, torn tails cut on reopen, one writer at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rig.errors import ArtifactError
from rig.model.soak import CycleRecord, EndRecord, HeaderRecord, ResumeRecord
from rig.names import JOURNAL
from rig.soak.journal import SCHEMA, Journal, read_records
from tests.soak_journal import read_journal

HEAD = HeaderRecord(schema=SCHEMA, soak_id="s")


def test_create_append_reopen(tmp_path: Path) -> None:
    folder = tmp_path / "soak"
    with Journal.create(folder, HEAD) as j:
        j.append(CycleRecord(cycle=1, run_id="a", outcome="ok", stages={}))
    records, good = read_journal(folder / JOURNAL)
    assert [r["type"] for r in records] == ["header", "cycle"]
    assert records[0]["schema"] == SCHEMA and good == (folder / JOURNAL).stat().st_size
    j, records, cut = Journal.reopen(folder)
    with j:
        assert cut == 0 and len(records) == 2
        j.append(EndRecord(reason="completed"))
    assert [r["type"] for r in read_journal(folder / JOURNAL)[0]] == ["header", "cycle", "end"]


@pytest.mark.parametrize("tail", [b'{"type":"cycle","cyc', b'{"type":"cycle"}', b"\x00\x00\x00\n"])
def test_a_torn_last_line_is_cut_on_reopen(tmp_path: Path, tail: bytes) -> None:
    folder = tmp_path / "soak"
    Journal.create(folder, HEAD).close()
    size = (folder / JOURNAL).stat().st_size
    with (folder / JOURNAL).open("ab") as f:
        f.write(tail)
    j, records, cut = Journal.reopen(folder)
    with j:
        assert len(records) == 1 and cut == len(tail)
        j.append(ResumeRecord(session=2))
    assert (folder / JOURNAL).read_bytes()[size:] == b'{"type":"resume","session":2}\n'


def test_a_bad_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "soak"
    Journal.create(folder, HEAD).close()
    with (folder / JOURNAL).open("ab") as f:
        f.write(b"garbage\n" + json.dumps({"type": "end"}).encode() + b"\n")
    with pytest.raises(ArtifactError, match=r"journal.jsonl:2: bad journal line"):
        read_records(folder / JOURNAL)


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    folder = tmp_path / "soak"
    with (
        Journal.create(folder, HEAD),
        pytest.raises(ArtifactError, match="another `rig soak`"),
    ):
        Journal.reopen(folder)
    Journal.reopen(folder)[0].close()  # the lock went with the writer


def test_not_a_journal(tmp_path: Path) -> None:
    (tmp_path / JOURNAL).write_text('{"type": "cycle"}\n')
    with pytest.raises(ArtifactError, match="expected a header line"):
        read_records(tmp_path / JOURNAL)
    with pytest.raises(ArtifactError, match="no soak journal"):
        read_records(tmp_path / "nowhere.jsonl")
