"""Writes that a planted symlink cannot redirect: the fixed `.part` names of before made
the writer follow a link planted under that name and overwrite its target."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from rig.artifacts import atomic
from rig.artifacts.rundir import write_json
from rig.commands.report import report
from rig.sinks.influx.spool import Spool
from tests.test_html_report import sample_folders


def test_a_planted_part_symlink_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "report.json.part").symlink_to(victim)  # the old temporary name
    write_json(folder / "report.json", {"outcome": "ok"})
    assert victim.read_text() == "precious"
    assert json.loads((folder / "report.json").read_text()) == {"outcome": "ok"}
    assert not (folder / "report.json").is_symlink()


def test_a_symlink_at_the_target_is_replaced_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "report.html"
    target.symlink_to(victim)
    atomic.write_text(target, "<html>", durable=False)
    assert victim.read_text() == "precious" and target.read_text() == "<html>"
    assert not target.is_symlink() and oct(target.stat().st_mode & 0o777) == "0o644"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic.atomic_open(target) as f:
        f.write("half")
        raise RuntimeError("disk full")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["run.json"]


def test_the_spool_ignores_planted_links(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    spool = Spool(tmp_path / "spool")
    spool.dir.mkdir()
    name = spool.name_for(123, "r1")
    (spool.dir / (name + ".part")).symlink_to(victim)
    spool.put(123, "r1", ["boot x=1 123"], {})
    assert victim.read_text() == "precious"


def test_compare_page_stays_in_the_folder_named_through_a_symlink(tmp_path: Path) -> None:
    """results/ holding symlinks to run folders elsewhere: compare.html goes to results/,
    not next to where the links point."""
    elsewhere = tmp_path / "elsewhere"
    folders = sample_folders(elsewhere, 3)
    results = tmp_path / "mine" / "results"
    results.mkdir(parents=True)
    for f in folders:
        (results / f.name).symlink_to(f)
    out = CliRunner().invoke(report, [str(results), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["page"] == str(results / "compare.html")
    assert (results / "compare.html").exists()
    assert not (elsewhere / "results" / "compare.html").exists()
