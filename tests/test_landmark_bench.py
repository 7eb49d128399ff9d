"""bench/landmark_offsets.py calibrates one kernel at a time: the file it writes is named
after the kernel its boots' consoles name, it refuses boots of several kernels, and
--check holds the stored calibration of that kernel to the boots. Run as a user runs it,
on the committed hooked boots (Linux 6.1 arm64)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rig.analysis.landmark_calibration import CALIBRATION_SCHEMA, load_calibration
from tests.e2e import REPO
from tests.test_real_boots import DATA
from tests.test_real_hookless import edit_console

BOOTS = [DATA / "capture-1", DATA / "capture-2", DATA / "initcall-debug-1"]


def bench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "bench" / "landmark_offsets.py"), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )


def last_json(p: subprocess.CompletedProcess[str]) -> dict:
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_write_names_the_file_after_the_boots_kernel(tmp_path: Path) -> None:
    out = last_json(bench(*BOOTS, "--write", tmp_path))
    path = tmp_path / "landmarks-linux-6.1-arm64.json"
    data = json.loads(path.read_text())
    assert data["schema"] == CALIBRATION_SCHEMA
    assert data["kernel"] == {"version": "6.1", "arch": "arm64"}
    assert set(data["boots"]) == {b.name for b in BOOTS}
    cal = load_calibration(path)  # what the analysis would read
    assert cal.key == "linux-6.1-arm64" and cal.offsets["run_init"].n == 3
    assert out["calibration"] == "linux-6.1-arm64" and out["stored"] is False
    assert {"reference", "ratio", "target_met"} <= set(out) and out["traced_checks"] > 0
    # A file named for another kernel is refused, naming the right one.
    p = bench(*BOOTS, "--write", tmp_path / "landmarks-linux-6.12-arm64.json")
    assert p.returncode != 0 and "landmarks-linux-6.1-arm64.json" in p.stderr
    assert not (tmp_path / "landmarks-linux-6.12-arm64.json").exists()


def test_boots_of_two_kernels_are_refused(tmp_path: Path) -> None:
    other = edit_console(
        DATA / "capture-2",
        tmp_path / "capture-2",
        lambda b: b.replace(b"Linux version 6.1.", b"Linux version 6.9."),
    )
    p = bench(DATA / "capture-1", other, "--write", tmp_path)
    assert p.returncode != 0
    assert "one named kernel" in p.stderr and "linux-6.9-arm64" in p.stderr
    assert not list(tmp_path.glob("*.json"))


def test_check_holds_the_stored_calibration_to_the_boots() -> None:
    out = last_json(bench(*BOOTS, "--check"))
    stored = json.loads((REPO / "rig/analysis/landmarks-linux-6.1-arm64.json").read_text())
    assert out["calibration"] == "linux-6.1-arm64" and out["stored"] is True
    for key, fig in out["landmarks"].items():
        assert fig["n"] == stored["landmarks"][key]["n"]  # the stored one's, not these 3
        assert fig["traced_checks"] == 3  # each has QEMU's trace
    # The committed boots are among its calibration boots: inside, every one.
    assert out["exceeded"] == 0 and out["target_met"] is True
