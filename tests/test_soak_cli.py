"""`rig soak` end to end on the simulated board: a clean run, Ctrl-C then --resume,
usage errors; and the runner in-process (power off on stop, console reopened)."""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rig.config.load import RigConfig
from rig.instruments.drivers import load_config
from rig.measure.session import Session
from rig.model.soak import HeaderRecord
from rig.model.summary import Limits, SoakSummary
from rig.soak.journal import SCHEMA, Journal
from rig.soak.runner import INTERRUPTED, SoakRunner, SoakState
from rig.soak.signals import StopFlag
from tests.conftest import REPO
from tests.e2e import interrupt_when, make_config
from tests.soak_journal import read_journal

pytestmark = pytest.mark.slow


def soak_config(tmp: Path, extra: str = "", boot_s: float = 1.0) -> Path:
    keys = {"boot_s": boot_s, "post_ui_s": 0.02}
    return make_config(tmp, extra=extra, off_hold_s=0.05, set_keys=keys)


def soak(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "rig.soak", *args, "--json"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO)


def types(folder: Path) -> list[str]:
    return [r["type"] for r in read_journal(folder / "journal.jsonl")[0]]


def test_soak_journals_and_summarises_every_cycle(tmp_path: Path) -> None:
    config = soak_config(tmp_path)
    proc = soak("--config", str(config), "--cycles", "4", "--id", "clean")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    folder = Path(out["folder"])
    assert out["cycles"] == {
        "run": 4,
        "classified": 4,
        "recovered": 0,
        "interrupted": 0,
        "unjournaled": 0,
    }
    assert out["outcomes"] == {"ok": 4} and out["status"] == "completed"
    assert types(folder) == ["header", "cycle", "cycle", "cycle", "cycle", "end"]
    kernel = next(s for s in out["stages"] if s["name"] == "kernel")
    assert kernel["n"] == 4 and 0.11 < kernel["p50"] < 0.13
    assert {"n", "min", "p50", "p95", "p99", "max", "stddev"} <= set(kernel)
    for rec in read_journal(folder / "journal.jsonl")[0][1:5]:
        assert (folder / rec["run_id"] / "report.json").is_file()
        assert rec["influx"] == "off" and rec["overhead_s"] > 0
        # Each capture was converted while the next boot was held off (the last one at
        # the end): none is left raw, and run.json says it was deferred, not recovered.
        run = json.loads((folder / rec["run_id"] / "run.json").read_text())
        assert run["capture"]["deferred"] is True and "recovered" not in run["capture"]
        assert run["capture"]["samples"] > 0
        assert not (folder / rec["run_id"] / "capture.bin").exists()
    assert (folder / "summary.html").read_text().count("<svg") == 6
    text = (folder / "summary.json").read_text()
    assert json.loads(text)["soak_id"] == "clean"
    # The summary model reads and writes summary.json back byte for byte.
    again = SoakSummary.from_json(json.loads(text)).to_json()
    assert json.dumps(again, indent=2) + "\n" == text


def test_ctrl_c_closes_cleanly_and_resume_finishes(tmp_path: Path) -> None:
    config = soak_config(tmp_path)
    cmd = [sys.executable, "-m", "rig.soak", "--config", str(config), "--cycles", "6"]
    proc = subprocess.Popen(
        [*cmd, "--id", "cc", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO
    )
    folder = tmp_path / "results" / "cc"
    # Two cycles journaled, then 0.25 s into the next boot.
    stdout, _ = interrupt_when(proc, lambda: types_or_empty(folder).count("cycle") >= 2, 0.25)
    assert proc.returncode == 130
    out = json.loads(stdout)
    assert out["status"] == "interrupted" and out["reason"] == "interrupted"
    assert types(folder)[-1] == "end" and "interrupted" in types(folder)
    resumed = soak("--resume", "cc", "--config", str(config))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    final = json.loads(resumed.stdout)
    assert final["cycles"]["run"] == 6 and final["sessions"] == 2
    assert final["cycles"]["unjournaled"] == 0
    numbers = [r["cycle"] for r in read_journal(folder / "journal.jsonl")[0] if "cycle" in r]
    assert numbers == sorted(set(numbers))  # numbering continues, nothing twice


def types_or_empty(folder: Path) -> list[str]:
    try:
        return types(folder)
    except Exception:
        return []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--duration", "soon"], "expected e.g. 90s"),
        (["--resume", "no-such-soak"], "no soak 'no-such-soak'"),
        (["--id", "a/b"], "letters, digits"),
        (["--id", "x", "--resume", "y"], "give only one"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], needle: str) -> None:
    proc = soak("--config", str(soak_config(tmp_path)), *args)
    assert proc.returncode == 2
    assert needle in json.loads(proc.stdout)["error"]


def soak_cfg(config: Path, folder: Path) -> RigConfig:
    """The config as `run_soak` hands it on: cycle folders go into the soak folder."""
    return dataclasses.replace(load_config(config), results_dir=folder)


def runner(tmp: Path, cfg: RigConfig, cycles: int, session: Session) -> Any:
    folder = cfg.results_dir
    head = HeaderRecord(schema=SCHEMA, soak_id="t", stages=[s.name for s in cfg.stages])
    journal = Journal.create(folder, head)
    stop = StopFlag()
    r = SoakRunner(cfg, journal, SoakState(), Limits(cycles), stop, tmp, session=session)
    return r, stop, journal, folder


def status(session: Session) -> dict[str, Any]:
    assert session.bench is not None and session.bench.analyzer is not None
    return session.bench.analyzer._control({"cmd": "status"})  # type: ignore[attr-defined]


def test_stop_powers_the_target_off(tmp_path: Path) -> None:
    config = soak_config(tmp_path, boot_s=5.0, extra="\n[sim.faults]\nhang = 1.0\n")
    cfg = soak_cfg(config, tmp_path / "soak")
    with Session(cfg) as session:
        r, stop, journal, folder = runner(tmp_path, cfg, 5, session)
        timer = threading.Timer(1.0, stop.request, args=(signal.SIGINT,))
        timer.start()
        try:
            assert r.run() == INTERRUPTED
        finally:
            timer.cancel()
            journal.close()
        deadline = time.monotonic() + 2
        while status(session)["powered"] and time.monotonic() < deadline:
            time.sleep(0.01)  # the relay frame is on its way (9600 baud, 5 ms delay)
        assert status(session)["powered"] is False and status(session)["boots"] == 1
    recs = read_journal(folder / "journal.jsonl")[0]
    assert recs[-1]["type"] == "interrupted"
    run = json.loads((folder / recs[-1]["run_id"] / "run.json").read_text())
    assert run["aborted"] is True and run["timing"]["boot_s"] < 2.0


def test_a_lost_console_is_reopened_for_the_next_cycle(tmp_path: Path) -> None:
    config = soak_config(tmp_path, boot_s=0.6, extra="\n[sim.faults]\nconsole_lost = 0.5\n")
    cfg = soak_cfg(config, tmp_path / "soak")
    with Session(cfg) as session:
        r, _stop, journal, folder = runner(tmp_path, cfg, 6, session)
        with journal:
            r.run()
        reopens = session.console_reopens
    cycles = [x for x in read_journal(folder / "journal.jsonl")[0] if x["type"] == "cycle"]
    outcomes = [c["outcome"] for c in cycles]
    assert len(cycles) == 6 and set(outcomes) <= {"ok", "console_lost"}
    assert reopens == outcomes[:-1].count("console_lost") >= 1
    for c in cycles:  # each verdict agrees with what the board did
        truth = json.loads((folder / c["run_id"] / "truth.json").read_text())["boots"][0]
        assert (c["outcome"] == "console_lost") == (truth["fault"] is not None)
