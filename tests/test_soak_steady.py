"""`rig soak` on a board whose rootfs_mount measures the same on every boot (issue 22,
defect 1), the real command on the simulated board without an analyzer: the stage comes
from two printk stamps, so its durations are equal but for float rounding. The soak
ends as the good soak it is, and whatever ends a soak, its error line is a line of its
own, also in a log that takes stdout and stderr together (a nightly job's)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e import make_config

pytestmark = pytest.mark.slow

STEADY = "rootfs_mount"


def steady_config(tmp: Path) -> Path:
    """config/rig.toml with no analyzer, booting fast.toml whose rootfs_mount never varies."""
    text = (REPO / "config" / "boards" / "fast.toml").read_text()
    text, n = re.subn(
        r'(name = "rootfs_mount"\n(?:[^\[\n]*\n)*?)sigma = [^\n]*\n', r"\g<1>sigma = 0.0\n", text
    )
    assert n == 1, "fast.toml's rootfs_mount has no sigma to set"
    board = tmp / "steady.toml"
    board.write_text(text)
    keys = {"boot_s": 1.0, "post_ui_s": 0.02}
    return make_config(tmp, board=str(board), analyzer="none", off_hold_s=0.05, set_keys=keys)


def soak_cmd(config: Path, soak_id: str, cycles: int) -> list[str]:
    return [sys.executable, "-m", "rig", "soak", "--config", str(config),
            "--cycles", str(cycles), "--id", soak_id]  # fmt: skip


def test_a_board_that_measures_the_same_every_boot_soaks_clean(tmp_path: Path) -> None:
    config = steady_config(tmp_path)
    proc = subprocess.run(
        soak_cmd(config, "steady", 5), capture_output=True, text=True, timeout=180, cwd=REPO
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "error" not in proc.stderr, proc.stderr
    # The live display's last frame ends its line, as everything else printed does.
    assert proc.stderr.endswith("\n") and "outcomes: ok 5" in proc.stderr.splitlines()
    folder = tmp_path / "results" / "steady"
    journal = [json.loads(line) for line in (folder / "journal.jsonl").read_text().splitlines()]
    values = [r["stages"][STEADY] for r in journal if r["type"] == "cycle"]
    assert len(values) == 5 and max(values) - min(values) < 1e-12  # the board
    page = (folder / "summary.html").read_text()
    assert page.count("<svg") == 6 and f"{STEADY} (no spread)" in page
    summary = json.loads((folder / "summary.json").read_text())
    stage = next(s for s in summary["stages"] if s["name"] == STEADY)
    assert stage["n"] == 5 and stage["stddev"] < 1e-12


def test_the_error_that_ends_a_soak_is_a_line_of_its_own(tmp_path: Path) -> None:
    """summary.html cannot be written (a folder is in its place): exit 3, and in the
    combined log the error starts a line instead of following the display's last one."""
    config = steady_config(tmp_path)
    folder = tmp_path / "results" / "blocked"
    proc = subprocess.Popen(
        soak_cmd(config, "blocked", 3),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (folder / "journal.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        (folder / "summary.html").mkdir()  # the soak summarises only after its cycles
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3, out
    lines = out.splitlines()
    errors = [line for line in lines if "error:" in line]
    assert len(errors) == 1 and errors[0].startswith("error: "), out
    assert "summary.html" in errors[0] and lines[-1] == errors[0]
    assert "outcomes: ok 3" in lines and out.endswith("\n")
    assert (folder / "summary.json").is_file()  # what was measured is kept
