"""A report a full disk had no room for is written once there is room, also when the
session that journaled the cycle ended first (the chaos bench found one left without a
report: the list of such cycles lived only in the ended session's memory). Real soaks
of the simulated board; the full disk's trace is made by hand, as the runner leaves it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rig.artifacts import rundir
from rig.names import JOURNAL
from tests.conftest import REPO
from tests.e2e import make_config

pytestmark = pytest.mark.slow
FULL = "not analyzed (artifacts kept): [Errno 28] No space left on device"


def soak(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "rig.soak", *args, "--json"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=REPO)


def test_a_resumed_soak_writes_the_report_an_ended_session_had_no_room_for(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, off_hold_s=0.05, set_keys={"boot_s": 1.0, "post_ui_s": 0.02})
    first = soak("--config", str(config), "--cycles", "2", "--id", "cu")
    assert first.returncode == 0, first.stdout + first.stderr
    folder = tmp_path / "results" / "cu"
    journal = folder / JOURNAL
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    cycle = next(r for r in lines if r["type"] == "cycle" and r["cycle"] == 2)
    run = folder / cycle["run_id"]
    # What a disk full at the end of cycle 2 leaves: run.json still "running", no report,
    # the journal's rig_error with the reason; then the session ended.
    (run / rundir.REPORT).unlink()
    (run / rundir.REPORT_HTML).unlink(missing_ok=True)
    doc = json.loads((run / rundir.RUN).read_text())
    doc["state"] = "running"
    (run / rundir.RUN).write_text(json.dumps(doc, indent=2))
    cycle.update(outcome="rig_error", detail=FULL, power_to_ui_s=None, stages={})
    journal.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))

    resumed = soak("--resume", str(folder), "--config", str(config), "--cycles", "3")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    report = json.loads((run / rundir.REPORT).read_text())
    assert report["outcome"] == "rig_error", report["analysis"]
    assert report["analysis"]["rig_error"] == FULL  # what the journal says, noted in run.json
    assert json.loads((run / rundir.RUN).read_text())["state"] == "failed"
    journaled = [json.loads(x) for x in journal.read_text().splitlines()]
    assert [r["cycle"] for r in journaled if r["type"] == "cycle"] == [1, 2, 3]  # no line twice
