"""run.json `state`: the rig says a run is unfinished, nobody infers it from missing keys
(docs/contract.md, "run.json state").

A cycle writes `state: running` before power-on and replaces it when it ends; a folder
without the mark is complete whoever wrote it, and a folder of a rig before the mark
(its `rig_version` older) keeps its old meaning: no `completed_utc`, unfinished."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from rig import steps
from rig.artifacts import rundir
from rig.errors import ArtifactError
from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.measure.cycle import run_cycle
from rig.measure.pipeline import analyze_folder
from rig.model.run import Run, RunState
from rig.soak.record import mark_rig_error
from tests.e2e import make_config

RIG = [sys.executable, "-m", "rig"]


class _Peek:
    """Reads run.json as the rig left it on disk when the boot wait starts."""

    def __init__(self) -> None:
        self.seen: dict[str, Any] | None = None
        self.folder: Path | None = None

    def __call__(self, event: steps.StepEvent) -> None:
        if event.kind == "start" and event.step.title == "wait for UI ready" and self.folder:
            self.seen = json.loads((self.folder / rundir.RUN).read_text())


@pytest.fixture(scope="module")
def cycles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One whole cycle and one stopped by the operator, on the simulated board; and what
    run.json said on disk while the first was booting."""
    tmp = tmp_path_factory.mktemp("state")
    cfg = load_config(make_config(tmp))
    peek = _Peek()
    out: dict[str, Any] = {}
    with Instruments(cfg) as bench:
        folders_before = set(cfg.results_dir.glob("*"))

        def find_folder() -> None:  # the cycle's folder exists once the hold begins
            new = set(cfg.results_dir.glob("*")) - folders_before
            peek.folder = next(iter(new))

        with steps.subscribed(peek):
            out["whole"] = run_cycle(cfg, bench, during_hold=find_folder).folder
        out["while_booting"] = peek.seen
        stop = threading.Event()
        stop.set()  # Ctrl-C already pressed: the wait for the boot ends at once
        out["stopped"] = run_cycle(cfg, bench, abort=stop).folder
    return out


def _run(folder: Path) -> dict[str, Any]:
    return json.loads((folder / rundir.RUN).read_text())  # type: ignore[no-any-return]


def test_the_rig_says_running_while_it_measures_and_complete_when_done(
    cycles: dict[str, Any],
) -> None:
    booting = cycles["while_booting"]
    assert booting is not None and booting["state"] == "running"
    assert "completed_utc" not in booting
    done = _run(cycles["whole"])
    assert done["state"] == "complete" and done["completed_utc"]
    assert analyze_folder(cycles["whole"], write=False).outcome == "ok"


def test_an_operators_stop_is_said_as_interrupted(cycles: dict[str, Any]) -> None:
    run = _run(cycles["stopped"])
    assert run["state"] == "interrupted" and run["aborted"] is True
    assert analyze_folder(cycles["stopped"], write=False).outcome == "interrupted"
    # The mark alone says it, for a recorder that does not write `aborted`.
    folder = _copy(cycles["stopped"], "stopped2", lambda r: r.pop("aborted"))
    assert analyze_folder(folder, write=False).outcome == "interrupted"


def _copy(src: Path, name: str, change: Any) -> Path:
    dst = src.parent.parent / name
    shutil.copytree(src, dst)
    run = _run(dst)
    change(run)
    (dst / rundir.RUN).write_text(json.dumps(run, indent=2))
    return dst


def test_a_run_left_running_is_the_rigs_failure_not_the_boards(cycles: dict[str, Any]) -> None:
    """A rig killed mid-cycle leaves `state: running`: rig_error, with the reason, even
    though the console shows a whole boot; `rig analyze` exits 3."""
    folder = _copy(cycles["whole"], "killed", lambda r: r.update(state="running"))
    report = analyze_folder(folder, write=False)
    assert report.outcome == "rig_error"
    assert "state 'running'" in (report.analysis.rig_error or "")
    p = subprocess.run([*RIG, "analyze", str(folder)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 3, p.stderr


def test_a_folder_without_the_mark_is_complete_whatever_it_lacks(cycles: dict[str, Any]) -> None:
    """A third-party recorder writes no `state`, no `completed_utc`, no `rig_version`."""

    def third_party(run: dict[str, Any]) -> None:
        for key in ("state", "completed_utc", "rig_version", "timing", "config"):
            run.pop(key, None)

    folder = _copy(cycles["whole"], "third-party", third_party)
    assert analyze_folder(folder, write=False).outcome == "ok"
    p = subprocess.run([*RIG, "analyze", str(folder)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr


def test_folders_of_a_rig_before_the_mark_keep_their_meaning(cycles: dict[str, Any]) -> None:
    """rig 0.1.0 wrote no `state`: without `completed_utc` its run was cut short."""

    def legacy(done: bool) -> Any:
        def change(run: dict[str, Any]) -> None:
            run.pop("state")
            run["rig_version"] = "0.1.0"
            if not done:
                run.pop("completed_utc")

        return change

    cut = _copy(cycles["whole"], "legacy-cut", legacy(False))
    report = analyze_folder(cut, write=False)
    assert report.outcome == "rig_error"
    assert "no completed_utc" in (report.analysis.rig_error or "")
    whole = _copy(cycles["whole"], "legacy-whole", legacy(True))
    assert analyze_folder(whole, write=False).outcome == "ok"


def test_the_soak_marks_a_failure_it_records_afterwards(cycles: dict[str, Any]) -> None:
    folder = _copy(cycles["whole"], "marked", lambda r: r.update(state="running"))
    assert mark_rig_error(folder, "killed")
    run = _run(folder)
    assert run["state"] == "failed" and run["rig_error"] == "rig_error"
    assert analyze_folder(folder, write=False).outcome == "rig_error"


def test_an_unknown_state_is_refused_naming_the_key(cycles: dict[str, Any]) -> None:
    folder = _copy(cycles["whole"], "odd", lambda r: r.update(state="paused"))
    with pytest.raises(ArtifactError, match=r"run\.json: key 'state': expected 'running' or"):
        rundir.read_run(folder)
    p = subprocess.run([*RIG, "analyze", str(folder)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "state" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize(
    ("version", "legacy"),
    [("0.1.0", True), ("0.1.9", True), ("0.2.0", False), ("0.10.1", False), ("1.0rc1", False)],
)
def test_which_rig_versions_are_legacy(version: str, legacy: bool) -> None:
    run = Run(run_id="x", board="b", power_on_ns=1, started_utc=None, rig_version=version)
    assert run.legacy is legacy
    assert run.unfinished is legacy  # none of them wrote completed_utc here
    run.state = RunState.COMPLETE
    assert not run.unfinished
