"""Run ids sort by start time, also within one second, and keep the contract's shape."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from rig.artifacts import rundir
from rig.errors import ArtifactError

SHAPE = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{6}$")


def test_ids_sort_by_time_within_a_second() -> None:
    t0 = datetime(2026, 11, 23, 22, 10, 19, tzinfo=UTC)
    times = [t0 + timedelta(microseconds=us) for us in (0, 40, 15_000, 500_000, 999_999)]
    times.append(t0 + timedelta(seconds=1))
    for _ in range(50):  # the random digits never reorder them
        ids = [rundir.new_run_id(t) for t in times]
        assert ids == sorted(ids)
        assert all(SHAPE.match(i) for i in ids), ids
    assert rundir.new_run_id(t0 + timedelta(microseconds=999_999))[17:21] == "ffff"


def test_ids_made_back_to_back_are_ordered() -> None:
    # Equal only in a 15 µs slot, where the random digits decide; ids from different
    # slots are in the order they were made.
    slots = [rundir.new_run_id()[:21] for _ in range(200)]
    assert slots == sorted(slots)


def test_a_taken_id_is_never_reused(tmp_path: Path) -> None:
    """Two rigs in one results folder in the same 15 µs slot: every folder is new."""
    now = datetime(2026, 11, 23, 22, 10, 19, 123456, tzinfo=UTC)
    made = {rundir.new_run_folder(tmp_path, now)[0] for _ in range(256)}
    assert len(made) == 256 and all(SHAPE.match(i) for i in made)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(made)
    with pytest.raises(ArtifactError, match=r"no free run id for 20261123T221019Z-1f9a"):
        rundir.new_run_folder(tmp_path, now)


def test_a_prefixed_folder_takes_a_free_id_too(tmp_path: Path) -> None:
    """`rig cost` names its folder cost-<run id>, by the same collision rule."""
    now = datetime(2026, 11, 23, 22, 10, 19, 123456, tzinfo=UTC)
    made = [rundir.new_run_folder(tmp_path, now, prefix="cost-") for _ in range(3)]
    assert [f.name for _, f in made] == [f"cost-{i}" for i, _ in made]
    assert len({i for i, _ in made}) == 3 and all(f.is_dir() for _, f in made)
