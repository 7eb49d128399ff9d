"""The README's layout table names every top-level module and folder of rig/ and of the
repository, and names nothing that is gone (issue 23: a newcomer finds each thing there)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def layout_paths() -> set[str]:
    text = (REPO / "README.md").read_text()
    table = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return {p.rstrip("/") for row in rows for p in re.findall(r"`([^`]+)`", row.split(" | ")[0])}


def test_every_top_level_module_and_folder_of_rig_is_listed() -> None:
    listed = layout_paths()
    present = {
        f"rig/{p.name}"
        for p in (REPO / "rig").iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py")
        or (p.is_dir() and (p / "__init__.py").is_file())
    }
    assert present - listed == set()


def test_every_listed_path_exists() -> None:
    assert {p for p in layout_paths() if not (REPO / p).exists()} == set()


def test_every_tracked_top_level_folder_is_listed() -> None:
    listed = {p.split("/")[0] for p in layout_paths()}
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    folders = {f.split("/")[0] for f in tracked if "/" in f and not f.startswith(".")}
    assert len(folders) > 5  # the listing worked
    assert folders - listed == set()
