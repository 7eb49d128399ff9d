"""The bisect journal (rig.bisect.journal): what --resume reads back after a kill."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.bisect.journal import Header, Journal, StepRecord, read
from rig.errors import ArtifactError
from rig.names import JOURNAL

HEADER = Header("/r", ["a" * 40, "b" * 40, "c" * 40], ["make"], ["k=1"], "/c.toml", "kernel",
                0.05, 8, 4, 8, 60.0)  # fmt: skip


def test_steps_come_back_as_written_and_a_torn_last_line_is_cut(tmp_path: Path) -> None:
    j = Journal.create(tmp_path, HEADER)
    end = StepRecord(0, "a" * 40, "good_end", "ok", [0.3, 0.31], [["boot-002", "panic"]])
    step = StepRecord(1, "b" * 40, "step", "ok", [0.33], verdict="bad", p=0.001,
                      ref={"good": [0.3], "bad": [0.33]})  # fmt: skip
    j.add(end)
    j.add(step)
    intact = (tmp_path / JOURNAL).stat().st_size
    with (tmp_path / JOURNAL).open("a") as f:
        f.write('{"type":"step","index":2,"comm')  # killed mid-write
    _, header, steps = read(tmp_path)
    assert header == HEADER
    assert steps == {0: end, 1: step}
    assert (tmp_path / JOURNAL).stat().st_size == intact


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"type":"header","schema":"bootrig.soak/1"}\n', ":1:"),
        ("not json\n", ":1:"),
    ],
)
def test_a_journal_that_is_not_a_bisect_is_named_with_its_line(
    tmp_path: Path, text: str, where: str
) -> None:
    (tmp_path / JOURNAL).write_text(text)
    with pytest.raises(ArtifactError, match=f"{JOURNAL}{where} bad journal line"):
        read(tmp_path)


def test_a_bad_line_in_the_middle_is_an_error_not_cut(tmp_path: Path) -> None:
    j = Journal.create(tmp_path, HEADER)
    with (tmp_path / JOURNAL).open("a") as f:
        f.write('{"type":"step","index":"x"}\n')
    j.add(StepRecord(1, "b" * 40, "step", "ok"))
    with pytest.raises(ArtifactError, match=f"{JOURNAL}:2: bad journal line"):
        read(tmp_path)
