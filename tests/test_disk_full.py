"""A disk that fills mid-run (RLIMIT_FSIZE: every write past the limit fails, as on a
full disk): the rig keeps what it measured, says what was kept and what was not, exits
3, and a later `rig analyze` files the run as the rig's failure, never as a boot."""

from __future__ import annotations

import json
import re
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from rig.measure.pipeline import analyze_folder
from simboard.client import SimProcess
from tests.e2e import REPO

#: Bytes per file: run.json fits (3 kB quiet; the reader's self-check lists every hold,
#: which passed 8 kB on a busy host), console.jsonl and report.json cannot.
LIMIT = 16000
#: The init scripts' chatter: 24 kB more console (25 kB in all), so console.jsonl passes
#: LIMIT however the reads are cut (one read or many: base64 alone makes it 33 kB).
CHATTER = [f"init: step {i:03d} " + "." * 60 for i in range(300)]


def _chatty_board(tmp_path: Path) -> Path:
    """The fast board with long init scripts (2.2 s of console at 115200 baud)."""
    text = (REPO / "config" / "boards" / "fast.toml").read_text()
    text = text.replace(
        '{ line = "INIT: version 2.86 booting" },',
        '{ line = "INIT: version 2.86 booting" },\n  { line = ' + json.dumps(CHATTER) + " },",
    )
    text, n = re.subn(r'(name = "init"\nduration_s = )0\.04', r"\g<1>2.5", text)
    assert n == 1, "fast.toml's init stage moved"
    board = tmp_path / "chatty.toml"
    board.write_text(text)
    return board


def _limited() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed rig
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _config(tmp_path: Path, sim: SimProcess, results: Path) -> Path:
    """The board as its own process (not under the limit), as real hardware would be."""
    cfg = tmp_path / "rig.toml"
    cfg.write_text(
        f'[rig]\nresults_dir = "{results}"\n'
        f'[power]\nport = "{sim.relay}"\noff_hold_s = 0.1\n'
        f'[console]\nport = "{sim.console}"\n[timeouts]\nboot_s = 10\n'
    )
    return cfg


def _run(cfg: Path, preexec: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--json"],
        capture_output=True, text=True, timeout=60, preexec_fn=preexec,
    )  # fmt: skip


def test_console_record_cut_by_a_full_disk(tmp_path: Path) -> None:
    with SimProcess(_chatty_board(tmp_path), seed=5) as sim:
        p = _run(_config(tmp_path, sim, tmp_path / "results"), _limited)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    error = json.loads(p.stdout)["error"]
    (folder,) = (tmp_path / "results").iterdir()
    assert "kept (console.jsonl, console.log, run.json)" in error, error
    assert f"rig analyze {folder}" in error
    run = json.loads((folder / "run.json").read_text())
    assert run["rig_error"] == "rig_error" and run["completed_utc"]
    assert "console.jsonl: File too large" in run["rig_error_detail"]
    assert "are not in console.jsonl" in run["rig_error_detail"]
    # Later, with space: analyzed from what was kept, filed as the rig's failure.
    report = analyze_folder(folder).to_json()
    assert report["outcome"] == "rig_error"
    assert report["analysis"]["rig_error"].startswith("disk: ")
    assert report["console"]["bytes"] > 0  # the records before the cut are read


def test_an_unwritable_results_dir_is_refused_before_the_board_is_powered(
    tmp_path: Path,
) -> None:
    """results_dir under a regular file: refused with the key, and the simulated board
    (started by the rig) never saw a relay frame."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with SimProcess(REPO / "config" / "boards" / "fast.toml", seed=5) as sim:
        cfg = _config(tmp_path, sim, blocker / "results")
        p = _run(cfg)
        frames = sim.control({"cmd": "status"})["frames"]
    assert p.returncode == 2, p.stdout + p.stderr
    error = json.loads(p.stdout)["error"]
    assert error.startswith(f"{cfg}: key 'rig.results_dir': {blocker / 'results'} cannot hold")
    assert frames == 0
