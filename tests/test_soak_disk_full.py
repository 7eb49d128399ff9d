"""A soak whose results disk fills during a boot and is freed a moment later (a real,
size-limited tmpfs the test mounts; root only): the cycles the full disk spoiled are
the rig's errors, the soak goes on, and once there is space again nothing is missing:
every cycle has one journal line and, where the board was powered, its report, and no
raw capture or temporary file is left behind."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.harness.chaos_env import SmallDisk, leftovers
from tests.conftest import REPO
from tests.e2e import make_config
from tests.require import require

pytestmark = pytest.mark.slow


@pytest.fixture(name="disk")
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    disk = SmallDisk(tmp_path / "disk", 64)
    try:
        disk.mount()
    except (OSError, subprocess.CalledProcessError) as e:
        require("root", f"cannot mount a tmpfs here (root only): {e}")
    try:
        yield disk
    finally:
        disk.unmount()


def _journal(soak: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (soak / "journal.jsonl").read_text().splitlines()]


def test_a_disk_full_for_a_moment_spoils_cycles_not_the_soak(disk: SmallDisk) -> None:
    keys = {"boot_s": 1.0, "post_ui_s": 0.02}
    config = make_config(disk.mountpoint, set_keys=keys, extra="[soak]\nmax_failure_rate = 1\n")
    soak = disk.mountpoint / "results" / "full"
    cmd = [sys.executable, "-m", "rig.soak", "--config", str(config), "--json",
           "--cycles", "8", "--id", "full"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # Fill the disk while the second cycle boots (its run.json is written just
        # before power-on), free it a second later.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            folders = sorted(p for p in soak.glob("2*") if (p / "run.json").exists())
            if len(folders) >= 2:
                break
            time.sleep(0.01)
        disk.fill()
        time.sleep(1.0)
        disk.free()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out.decode() + err.decode()
    lines = [r for r in _journal(soak) if r["type"] == "cycle"]
    folders = {p.name for p in soak.iterdir() if p.is_dir() and not p.name.startswith(".")}
    ids = [str(r["run_id"]) for r in lines]
    assert len(ids) == len(set(ids)) and folders <= set(ids)  # one line each
    # A cycle that could not even make its folder is a rig error with no artifacts.
    assert all(r["outcome"] == "rig_error" for r in lines if r["run_id"] not in folders)
    outcomes = [r["outcome"] for r in lines]
    assert "rig_error" in outcomes and outcomes[0] == "ok" and outcomes[-1] == "ok"
    assert all(o in ("ok", "rig_error") for o in outcomes), outcomes
    for name in folders:
        if (soak / name / "run.json").exists():
            assert (soak / name / "report.json").exists(), name
    assert leftovers(soak.parent) == [], [(r["run_id"], r.get("detail")) for r in lines]
