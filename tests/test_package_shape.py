"""The package's shape: no file over 400 lines (a file does one thing)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 400


def test_no_source_file_over_400_lines() -> None:
    files = [p for d in ("rig", "simboard", "bench", "tests") for p in (REPO / d).rglob("*.py")]
    assert len(files) > 100  # the walk found the tree
    long = {
        str(p.relative_to(REPO)): n
        for p in files
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
