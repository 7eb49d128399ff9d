"""`rig run --place`: the target as a labgrid place, against a real labgrid
(coordinator, exporter, client from PyPI) on 127.0.0.1.

Three simulated boards are exported by one exporter, each as a place with a power
resource (the board's REST PDU, switched by labgrid's NetworkPowerDriver) and a
NetworkSerialPort (a real ser2net in front of the board's console pty, raw TCP for two,
RFC 2217 for the third). The rig starts each board itself (its `[sim]` table, at the
fixed PDU port and console path the exporter and ser2net were configured with, as a lab
configures them for boards on the bench), but it switches and reads it only through
the place. The lab is tests/labgrid_boards.py; every process is stopped by its PID.
"""

from __future__ import annotations

import getpass
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rig.instruments.analyzer_sigrok import SigrokAnalyzer
from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from tests.e2e import REPO, truth_boot
from tests.labgrid_boards import BoardLab, SimBoard, boards


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoardLab]:
    def more(made: list[SimBoard]) -> dict[str, dict[str, Any]]:
        first = made[0].resources()
        return {
            # Power only: the rig acquires the place, then finds no console.
            "mute": {"NetworkPowerPort": first["NetworkPowerPort"]},
            # Board 1 again, with a sigrok analyzer (sigrok's demo device) exported.
            "scope": {**first, "SigrokDevice": {"driver": "demo"}},
        }

    tmp = tmp_path_factory.mktemp("places")
    profiles = ["fast.toml"] * 3
    with boards(tmp, profiles, protocols=["raw", "raw", "rfc2217"], extra=more) as lab:
        yield lab


def _config(bench: BoardLab, board: SimBoard, tmp: Path, **kw: Any) -> Path:
    """The same rig config for every place (its board's [sim] aside): [target] says
    how to reach labgrid, `--place` which board."""
    return board.config(tmp, **kw)


def _rig(cfg: Path, place: str, *more: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--place", place, "--json"]
    return subprocess.Popen(
        [*argv, *more], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )


def _done(p: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def test_a_boot_on_each_of_three_places_at_once(bench: BoardLab, tmp_path: Path) -> None:
    """Three rigs, one per place, in parallel: each report is its board's truth, run.json
    names the place and what was used of it, and every place is released."""
    runs = []
    for b in bench.boards:
        cfg = _config(bench, b, tmp_path / b.place)
        runs.append((b, _rig(cfg, b.place)))
    for b, proc in runs:
        code, out, err = _done(proc)
        assert code == 0, f"{b.place}: {out[-2000:]} {err[-2000:]}"
        result = json.loads(out)
        report, folder = result["report"], Path(result["folder"])
        assert report["outcome"] == "ok", report
        tb = report["time_base"]
        assert tb["reference"] == "analyzer" and tb["power_edge_sample"] is not None
        truth = truth_boot(folder)["markers"]["ui_ready"]
        assert abs(report["power_to_ui_s"] - truth) <= 1 / tb["samplerate_hz"] + 1e-12
        run = json.loads((folder / "run.json").read_text())
        place = run["place"]
        assert place["name"] == b.place and place["acquired_by_rig"] is True
        assert place["coordinator"] == bench.lab.address
        assert place["holder"].endswith("/" + getpass.getuser())  # labgrid's host/user
        assert place["console"] == b.console_url == run["instruments"]["console"]
        assert place["power"] == "NetworkPowerPort 'NetworkPowerPort'"
        assert "analyzer" not in place  # the place exports none: [analyzer] says sim
        assert run["config"]["target"]["place"] == b.place  # --place, in the snapshot
        # The console really came through ser2net: the boot's tag lines are in it.
        assert "bootrig: marker ui_ready" in (folder / "console.log").read_text()
    for b in bench.boards:
        assert bench.lab.acquired(b.place) is None, b.place


def test_a_failed_boot_still_releases_the_place(bench: BoardLab, tmp_path: Path) -> None:
    b = bench.boards[0]
    cfg = _config(bench, b, tmp_path)
    with cfg.open("a") as f:
        f.write('\n[sim.faults]\nhang = 1.0\nhang_stages = ["kernel"]\n')
    code, out, err = _done(_rig(cfg, b.place, "--set", "timeouts.boot_s=3"))
    assert code == 1, out[-2000:] + err[-2000:]
    assert json.loads(out)["report"]["outcome"] == "hang_in_kernel"
    assert bench.lab.acquired(b.place) is None


def test_a_rig_failure_after_the_acquire_still_releases(bench: BoardLab, tmp_path: Path) -> None:
    """The place `mute` has power but no console: the rig acquired it, fails (exit 3,
    naming the place and what it lacks) and releases it."""
    code, out, err = _done(_rig(_config(bench, bench.boards[0], tmp_path), "mute"))
    assert code == 3, out + err
    msg = json.loads(out)["error"]
    assert "labgrid place 'mute' has no serial console (NetworkSerialPort)" in msg, msg
    assert "Traceback" not in err
    assert bench.lab.acquired("mute") is None


def test_a_place_held_by_someone_else_is_a_clear_error(bench: BoardLab, tmp_path: Path) -> None:
    b = bench.boards[1]
    bench.lab.client("-p", b.place, "acquire", user="alice")
    try:
        code, out, err = _done(_rig(_config(bench, b, tmp_path), b.place))
        assert code == 3, out + err
        msg = json.loads(out)["error"]
        assert f"labgrid place '{b.place}'" in msg and "acquired by" in msg, msg
        assert "acquired by alice" in msg and "Traceback" not in err
        assert str(bench.lab.acquired(b.place)).endswith("/alice")  # left alone
    finally:
        bench.lab.client("-p", b.place, "release", user="alice")


def test_sigterm_during_the_boot_releases_the_place(bench: BoardLab, tmp_path: Path) -> None:
    b = bench.boards[2]
    cfg = _config(bench, b, tmp_path)
    with cfg.open("a") as f:
        f.write('\n[sim.faults]\nhang = 1.0\nhang_stages = ["kernel"]\n')
    proc = _rig(cfg, b.place)
    try:
        deadline = time.monotonic() + 60
        # Wait for the boot itself: run.json exists once the console is open.
        while not list((tmp_path / "results").glob("*/run.json")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run did not start"
            time.sleep(0.1)
        assert bench.lab.acquired(b.place) is not None
        proc.send_signal(signal.SIGTERM)
        code, out, err = _done(proc, 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 143, out[-2000:] + err[-2000:]
    assert json.loads(out)["report"]["outcome"] == "interrupted"
    assert bench.lab.acquired(b.place) is None


def test_the_analyzer_a_place_exports_is_the_default(bench: BoardLab, tmp_path: Path) -> None:
    """With no [analyzer] driver, the place's exported sigrok device is captured (here
    sigrok's demo driver: the instruments are built, not a boot measured)."""
    cfg = _config(bench, bench.boards[0], tmp_path)
    cfg.write_text(re.sub(r'^driver = "sim" .*\n', "", cfg.read_text(), flags=re.M))
    c = load_config(cfg, overrides=['target.place="scope"'])
    with Instruments(c) as got:
        assert isinstance(got.analyzer, SigrokAnalyzer) and got.analyzer.device == "demo"
        assert got.place is not None
        assert (got.place.name, got.place.analyzer) == ("scope", "demo")
        assert got.place.console == bench.boards[0].console_url
        assert bench.lab.acquired("scope") is not None
    assert bench.lab.acquired("scope") is None
