"""testsuites/boot_budget.robot on three labgrid places at once through pabot.

A real labgrid lab (tests/labgrid_boards.py: coordinator, exporter, ser2net) exports
three simulated boards of two profiles: b1 and b3 the fast test board (`fastboard`), b2
the optimised Ecovec (`ecovec`). pabot runs the suite once per argument file, one
process per place, as the docs tell a lab to; each suite acquires its place through the
Robot library's `place=`, boots it, checks that board's budgets of config/budgets.toml
and releases it. Everything is read back from pabot's output.xml and the run folders.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from robot.api import ExecutionResult
from robot.result import Message
from robot.result import TestSuite as SuiteResult

from rig.errors import InstrumentError
from rig.robot.target import Target
from tests.e2e import REPO, make_config
from tests.labgrid_boards import BoardLab, boards

pytestmark = pytest.mark.slow

SUITE = REPO / "testsuites" / "boot_budget.robot"
BUDGETS = REPO / "config" / "budgets.toml"
PROFILES = ["fast.toml", "ecovec-optimised.toml", "fast.toml"]
BOARD_NAMES = {"b1": "fastboard", "b2": "ecovec", "b3": "fastboard"}  # the profiles' [board]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoardLab]:
    with boards(tmp_path_factory.mktemp("pabot"), PROFILES) as the_lab:
        yield the_lab


@dataclass(frozen=True)
class PabotRun:
    code: int
    output: str
    suites: dict[str, SuiteResult]  # by the place in each suite's metadata


def run_pabot(lab: BoardLab, tmp: Path, budgets: Path) -> PabotRun:
    """`pabot --processes 3 --argumentfileN ...` as docs/robot.md gives it: one argument
    file per place, each with that place's config. pabot and every robot it starts are
    stopped by the process group of the pabot started here, even when the wait fails."""
    argv = [
        str(BIN / "pabot"),
        "--processes",
        "3",
        "--no-pabotlib",
        "--outputdir",
        str(tmp / "out"),
    ]
    for i, b in enumerate(lab.boards, start=1):
        cfg = b.config(tmp / b.place)
        args = tmp / f"{b.place}.args"
        args.write_text(
            f"--variable PLACE:{b.place}\n--variable CONFIG:{cfg}\n--variable BUDGETS:{budgets}\n"
        )
        argv += [f"--argumentfile{i}", str(args)]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.Popen(
        [*argv, str(SUITE)], cwd=tmp, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # pabot's group: the robots, their rigs
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    result = ExecutionResult(str(tmp / "out" / "output.xml"))
    suites = {s.metadata["Place"]: s for s in result.suite.suites}
    return PabotRun(proc.returncode, out, suites)


def messages(suite: SuiteResult) -> list[str]:
    """Every message the suite's keywords logged, its setup's too, in order."""
    found: list[str] = []

    def walk(item: Any) -> None:
        if isinstance(item, Message):
            found.append(item.message)
            return
        for child in getattr(item, "body", ()):
            walk(child)

    walk(suite.setup)
    for test in suite.tests:
        walk(test)
    return found


def run_folders(suite: SuiteResult) -> list[Path]:
    return [Path(m) for m in re.findall(r"Artifacts: (\S+)", "\n".join(messages(suite)))]


def released(lab: BoardLab) -> dict[str, str | None]:
    """Who holds each board's place (None: free)."""
    return {b.place: lab.lab.acquired(b.place) for b in lab.boards}


def run_json(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "run.json").read_text())  # type: ignore[no-any-return]


def test_boot_budget_on_three_places_through_pabot(lab: BoardLab, tmp_path: Path) -> None:
    run = run_pabot(lab, tmp_path, BUDGETS)
    assert run.code == 0, run.output[-4000:]
    assert sorted(run.suites) == ["b1", "b2", "b3"], run.output[-4000:]
    budgets = tomllib.loads(BUDGETS.read_text())["boards"]
    seen: set[Path] = set()
    for place, suite in run.suites.items():
        board = BOARD_NAMES[place]
        assert suite.status == "PASS", (place, [(t.name, t.message) for t in suite.tests])
        assert all(t.status == "PASS" for t in suite.tests) and len(suite.tests) == 7
        assert suite.metadata["Board"] == board
        # Its own place and board, in every boot it made.
        folders = run_folders(suite)
        assert len(set(folders)) == 3, folders  # Measure Boot, then BOOTS (2) more
        for folder in set(folders):
            rj = run_json(folder)
            assert rj["place"]["name"] == place and rj["place"]["acquired_by_rig"] is True
            assert rj["config"]["target"]["place"] == place  # applied as `rig run --place`
            assert rj["board"] == board
        seen |= set(folders)
        # The budgets it loaded and checked are its board's.
        log = "\n".join(messages(suite))
        assert f"Budgets of {board} " in log
        want = budgets[board]
        kernel = re.findall(r"stage 'kernel' \S+ s, budget (\S+) s", log)
        total = re.findall(r"power-to-UI \S+ s, budget (\S+) s", log)
        assert kernel and {float(k) for k in kernel} == {want["stages"]["kernel"]}
        assert total and {float(t) for t in total} == {want["power_to_ui_s"]}
    assert len(seen) == 9  # nine boots, no folder shared between suites
    assert released(lab) == {"b1": None, "b2": None, "b3": None}


def test_a_budget_one_board_cannot_meet_fails_only_its_suite(lab: BoardLab, tmp_path: Path) -> None:
    """The same suite and budgets, but the Ecovec's kernel budget is 1 ms: b2 fails,
    naming the budget; the fast boards' suites, on their own budgets, pass."""
    text, n = re.subn(
        r"(\[boards\.ecovec\.stages\][^\[]*?^kernel = )[\d.]+",
        r"\g<1>0.001",
        BUDGETS.read_text(),
        flags=re.M | re.S,
    )
    assert n == 1
    budgets = tmp_path / "budgets.toml"
    budgets.write_text(text)
    run = run_pabot(lab, tmp_path, budgets)
    assert run.code != 0, run.output[-4000:]  # robot's: the number of failed tests
    assert run.suites["b1"].status == run.suites["b3"].status == "PASS", run.output[-4000:]
    b2 = run.suites["b2"]
    assert b2.status == "FAIL"
    failed = {t.name: t.message for t in b2.tests if t.status == "FAIL"}
    assert "Kernel Is Within Its Budget" in failed, failed
    assert "over its budget of 0.001000 s" in failed["Kernel Is Within Its Budget"]
    # Only kernel budgets fail: the board boots and its other budgets still hold.
    assert "Board Boots To A Usable UI" not in failed
    assert "Power To UI Is Within Its Budget" not in failed
    assert released(lab) == {"b1": None, "b2": None, "b3": None}


def test_a_second_rig_on_a_place_of_this_host_is_refused(tmp_path: Path) -> None:
    """labgrid lets a second process of the same user use a place it holds, so every
    bench with a place claims it on this host first: while another process holds it, a
    suite and `rig run --place` fail naming that process's PID; another place is free;
    within one process claims nest (a suite's `Run Soak`); once the holder is gone the
    place is free. (No lab needed: the claim comes before anything talks to labgrid.)"""
    target = f'\n[target]\ncoordinator = "127.0.0.1:9"\npython = "{sys.executable}"\n'
    cfg = make_config(tmp_path, extra=target)
    place = f"claim-{os.getpid()}"  # this host's claims are per user, not per test
    hold = (
        "import sys; from rig.instruments.target_claim import PlaceClaim; "
        f"c = PlaceClaim({place!r}, '127.0.0.1:9'); c.claim(); print('held', flush=True); "
        "sys.stdin.read()"
    )
    holder = subprocess.Popen([sys.executable, "-c", hold], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=REPO)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        says = (
            f"labgrid place '{place}' is in use by another rig on this host "
            f"(PID {holder.pid}): labgrid grants a place to a user, not a process"
        )
        second = Target(cfg, place=place)
        with pytest.raises(InstrumentError) as e:
            second.session()
        assert str(e.value).startswith(says), e.value
        argv = [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--place", place,
                "--json"]  # fmt: skip
        r = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=60)
        assert r.returncode == 3 and json.loads(r.stdout)["error"].startswith(says), r.stdout
        other = Target(cfg, place=f"{place}-other")
        other.claim()
        nested = Target(cfg, place=f"{place}-other")
        nested.claim()  # the same process: nests
        nested.close()
        other.close()
    finally:
        holder.stdin.close()  # type: ignore[union-attr]
        holder.wait(timeout=30)
    second.claim()  # free again
    second.close()
