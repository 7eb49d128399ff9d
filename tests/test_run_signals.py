"""`rig run` stopped by a signal: nothing it started outlives it (the real sigrok-cli with
sigrok's `demo` driver, the simulated board), what it captured is kept, and the run says
how it ended. SIGINT and SIGTERM stop it cleanly (exit 130 / 143, outcome
`interrupted`); against SIGKILL only the kernel (sigrok-cli: PR_SET_PDEATHSIG) and the
simulator's own watch of its parent (--exit-with-parent) help."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from rig.artifacts import rundir
from tests.e2e import make_config
from tests.test_leftovers import RIG, _alive, _children
from tests.waiting import console_so_far, wait_until

pytestmark = pytest.mark.slow
T = TypeVar("T")


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], list[int], Path]:
    """`rig run` of the slow baseline board with sigrok's demo driver as the analyzer,
    once its capture is running and the board is booting (its first console line is
    recorded): the process, its sigrok-cli and simulator, the folder."""
    cfg = make_config(tmp_path, board="ecovec-baseline.toml", analyzer="sigrok", extra="")
    text = cfg.read_text().replace("debounce_us = 1000", 'debounce_us = 1000\ndevice = "demo"')
    cfg.write_text(text.replace("samplerate = 1_000_000", "samplerate = 100_000"))
    rig = subprocess.Popen(
        [*RIG, "run", "--config", str(cfg), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    results = tmp_path / "results"

    def running(what: str, check: Callable[[], T]) -> T:
        def still() -> T:
            assert rig.poll() is None, rig.communicate()
            return check()

        return wait_until(what, still, 60)

    try:
        raws = running(
            "a capture to start",
            lambda: [r for r in results.glob("*/capture.bin") if r.stat().st_size > 0],
        )
        running("the board's first console line", lambda: "\n" in console_so_far(results))
        kids = [
            p
            for p in _children(rig.pid)
            if "sigrok" in _cmdline(p) or "simboard serve" in _cmdline(p)
        ]
        assert any("sigrok" in _cmdline(p) for p in kids), "sigrok-cli is not the rig's child"
        assert any("simboard serve" in _cmdline(p) for p in kids), "the simulator is not its child"
    except BaseException:
        rig.kill()  # our own child, by PID
        rig.communicate()
        raise
    return rig, kids, raws[0].parent


def _gone(pids: list[int], within_s: float = 30.0) -> bool:
    try:
        wait_until("the processes to end", lambda: not any(map(_alive, pids)), within_s)
    except AssertionError:
        return False
    return True


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_run_cleanly_and_files_it_as_interrupted(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    rig, kids, folder = _start(tmp_path, "--json")
    try:
        os.kill(rig.pid, sig)  # our own child, by PID
        out, err = rig.communicate(timeout=60)
    finally:
        if rig.poll() is None:
            rig.kill()
            rig.wait()
    assert rig.returncode == code, err[-2000:]
    assert "Traceback" not in err, err
    assert _gone(kids), "sigrok-cli or the simulator outlived the stopped rig"
    report = json.loads(out)["report"]
    assert report["outcome"] == "interrupted"
    run = rundir.read_run(folder)
    assert run.aborted is True and run.completed_utc
    # What was captured until then is kept and converted (sigrok's demo device streams
    # its own patterns, not the simulated board's rail: only the samples are checked).
    assert (folder / rundir.CAPTURE).is_file() and not (folder / rundir.CAPTURE_RAW).exists()
    assert report["capture"]["samples"] > 0


def test_a_sigkilled_run_leaves_no_simulator(tmp_path: Path) -> None:
    rig, kids, _ = _start(tmp_path)
    try:
        os.kill(rig.pid, signal.SIGKILL)
        rig.communicate(timeout=30)
    finally:
        if rig.poll() is None:
            rig.kill()
            rig.wait()
    assert _gone(kids), "sigrok-cli or the simulator outlived a SIGKILLed rig"
