"""`rig run --place`: the target as a labgrid place, against a real labgrid
(coordinator, exporter, client from PyPI) on 127.0.0.1.

Three simulated boards are exported by one exporter, each as a place with a power
resource (the board's REST PDU, switched by labgrid's NetworkPowerDriver) and a
NetworkSerialPort (a real ser2net in front of the board's console pty, raw TCP for two,
RFC 2217 for the third). The rig starts each board itself (its `[sim]` table, at the
fixed PDU port and console path the exporter and ser2net were configured with, as a lab
configures them for boards on the bench), but it switches and reads it only through
the place. Every process is stopped by its PID (tests/labgrid_lab.py, tests/ser2net.py).
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
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rig.config import load_config
from rig.instruments.analyzer_sigrok import SigrokAnalyzer
from rig.instruments.setup import Instruments
from tests.e2e import REPO, make_config, truth_boot
from tests.labgrid_lab import LABGRID_PYTHON, Lab, lab
from tests.ser2net import free_port, ser2net


@dataclass(frozen=True)
class Board:
    place: str
    pdu_port: int
    link: Path  # where the board publishes its console pty; ser2net serves it
    console_url: str


@dataclass(frozen=True)
class Bench:
    lab: Lab
    boards: list[Board]
    tmp: Path


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    tmp = tmp_path_factory.mktemp("places")
    with ExitStack() as stack:
        lg = stack.enter_context(lab(tmp / "lab"))
        boards, groups = [], {}
        for i, protocol in enumerate(["raw", "raw", "rfc2217"], start=1):
            d = tmp / f"b{i}"
            d.mkdir()
            link = d / "console"
            port = stack.enter_context(ser2net(str(link), d))[protocol]
            url = f"socket://127.0.0.1:{port}"
            if protocol == "rfc2217":
                url = f"rfc2217://127.0.0.1:{port}?ign_set_control"
            board = Board(f"b{i}", free_port(), link, url)
            boards.append(board)
            url = f"http://127.0.0.1:{board.pdu_port}/relay/{{index}}/{{value}}"
            groups[f"board{i}"] = {
                "NetworkPowerPort": {"model": "simplerest", "host": url, "index": 1},
                "NetworkSerialPort": {"host": "127.0.0.1", "port": port, "speed": 115200,
                                      "protocol": protocol},
            }  # fmt: skip
        # A fourth place with power only: the rig acquires it, then finds no console.
        groups["mute"] = {"NetworkPowerPort": groups["board1"]["NetworkPowerPort"]}
        # A fifth: board 1 again, with a sigrok analyzer (sigrok's demo device) exported.
        groups["scope"] = {**groups["board1"], "SigrokDevice": {"driver": "demo"}}
        lg.exporter("lab", groups)
        for i in (1, 2, 3):
            lg.place(f"b{i}", f"lab/board{i}/*")
        lg.place("mute", "lab/mute/*")
        lg.place("scope", "lab/scope/*")
        yield Bench(lg, boards, tmp)


def _config(bench: Bench, board: Board, tmp: Path, **kw: Any) -> Path:
    """The same rig config for every place (its board's [sim] aside): [target] says
    how to reach labgrid, `--place` which board."""
    target = (
        f'\n[target]\ncoordinator = "{bench.lab.address}"\npython = "{LABGRID_PYTHON}"\n'
        "timeout_s = 20\n"
    )
    tmp.mkdir(parents=True, exist_ok=True)
    sim = {"pdu_port": board.pdu_port, "console_link": str(board.link), **kw.pop("sim", {})}
    return make_config(tmp, sim=sim, extra=target, **kw)


def _rig(cfg: Path, place: str, *more: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--place", place, "--json"]
    return subprocess.Popen(
        [*argv, *more], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )


def _done(p: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def test_a_boot_on_each_of_three_places_at_once(bench: Bench, tmp_path: Path) -> None:
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


def test_a_failed_boot_still_releases_the_place(bench: Bench, tmp_path: Path) -> None:
    b = bench.boards[0]
    cfg = _config(bench, b, tmp_path)
    with cfg.open("a") as f:
        f.write('\n[sim.faults]\nhang = 1.0\nhang_stages = ["kernel"]\n')
    code, out, err = _done(_rig(cfg, b.place, "--set", "timeouts.boot_s=3"))
    assert code == 1, out[-2000:] + err[-2000:]
    assert json.loads(out)["report"]["outcome"] == "hang_in_kernel"
    assert bench.lab.acquired(b.place) is None


def test_a_rig_failure_after_the_acquire_still_releases(bench: Bench, tmp_path: Path) -> None:
    """The place `mute` has power but no console: the rig acquired it, fails (exit 3,
    naming the place and what it lacks) and releases it."""
    code, out, err = _done(_rig(_config(bench, bench.boards[0], tmp_path), "mute"))
    assert code == 3, out + err
    msg = json.loads(out)["error"]
    assert "labgrid place 'mute' has no serial console (NetworkSerialPort)" in msg, msg
    assert "Traceback" not in err
    assert bench.lab.acquired("mute") is None


def test_a_place_held_by_someone_else_is_a_clear_error(bench: Bench, tmp_path: Path) -> None:
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


def test_sigterm_during_the_boot_releases_the_place(bench: Bench, tmp_path: Path) -> None:
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


def test_the_analyzer_a_place_exports_is_the_default(bench: Bench, tmp_path: Path) -> None:
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
