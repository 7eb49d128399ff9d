"""Console-only runs: t = 0 is the stamp taken right before the power-on command, and the
board comes up somewhere while that command runs (a PDU's CLI, uhubctl: 0.2 s on a real
bench) or up to a relay's delay after it. Whatever is timed from the power event states
that window (docs/contract.md, "Time base")."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from rig import names
from rig.analysis.events import RELAY_DELAY_BOUND_S
from rig.instruments import drivers  # noqa: F401 - registers every driver
from rig.instruments.registry import POWER
from rig.measure.pipeline import analyze_folder
from simboard.client import SimProcess
from tests.e2e import REPO, truth_boot
from tests.qemu_env import rig_run
from tests.step_title import step_title

#: The on-command's own time before it switches: a slow PDU's CLI.
SWITCH_AFTER_S = 0.2

FRAME = (
    "import serial,sys,time; port=serial.Serial(sys.argv[1]); time.sleep({delay}); "
    "port.write(bytes([0xA0,1,{s},0xA1+{s}])); port.flush()"
)


@pytest.mark.slow
def test_a_slow_power_command_is_in_the_uncertainty(tmp_path: Path) -> None:
    with SimProcess(REPO / "config" / "boards" / "fast.toml", seed=7) as sim:
        on = [sys.executable, "-c", FRAME.format(delay=SWITCH_AFTER_S, s=1), sim.relay]
        off = [sys.executable, "-c", FRAME.format(delay=0, s=0), sim.relay]
        cfg = tmp_path / "rig.toml"
        cfg.write_text(
            f'[rig]\nresults_dir = "{tmp_path / "results"}"\n'
            f'[power]\ndriver = "command"\non = {json.dumps(on)}\noff = {json.dumps(off)}\n'
            f'off_hold_s = 0.1\n[console]\nport = "{sim.console}"\n[timeouts]\nboot_s = 10\n'
        )
        sim.client.arm({"power": 0})  # the board's truth only: the rig has no analyzer
        _, out = rig_run(cfg, timeout=120)
        folder = Path(out["folder"])
        sim.client.stop(truth=folder / "truth.json")
    report = out["report"]
    assert report["outcome"] == "ok", report["outcome"]
    assert report["time_base"]["reference"] == "host"
    run = json.loads((folder / "run.json").read_text())
    step = next(s for s in run["timing"]["steps"] if s["title"] == "power on")
    command_end_s = step["start_s"] + step["duration_s"]
    assert command_end_s >= SWITCH_AFTER_S

    power = next(e for e in report["events"] if e["name"] == "power")
    assert power["t_s"] == 0.0
    assert power["uncertainty_s"] >= command_end_s
    assert power["rail_within_s"][0] == 0.0 and power["rail_within_s"][1] >= command_end_s
    assert power["power_on_command_s"] == pytest.approx(command_end_s)

    boot = truth_boot(folder)
    rail_s = (boot["power_edge_ns"] - run["power_on_ns"]) / 1e9
    assert rail_s >= SWITCH_AFTER_S  # the board did come up late in the command
    stages = {s["name"]: s for s in report["stages"]}
    loader = stages["bootloader"]
    assert loader["start"]["uncertainty_s"] >= command_end_s
    true_loader = boot["markers"]["bootm"]  # from the rail, as the stage means it
    assert abs(loader["duration_s"] - true_loader) <= loader["uncertainty_s"]
    assert report["power_to_ui_uncertainty_s"] >= command_end_s
    assert (
        abs(report["power_to_ui_s"] - boot["markers"]["ui_ready"])
        <= (report["power_to_ui_uncertainty_s"])
    )
    # Stages that do not start at the power event keep their own, smaller uncertainty.
    assert stages["rootfs_mount"]["uncertainty_s"] < 0.05


def _folder(tmp: Path, timing: dict | None) -> Path:
    """A recorder's console-only folder (docs/contract.md, "The minimum folder"), with or
    without the rig's `timing` (its `power on` step)."""
    boot = REPO / "tests" / "data" / "real" / "console-1"
    recorded = json.loads((boot / "run.json").read_text())
    keys = ("schema", "run_id", "board", "power_on_ns", "started_utc")
    run = {k: recorded[k] for k in keys}
    if timing is not None:
        run["timing"] = timing
    folder = tmp / ("with-steps" if timing else "minimum")
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps(run))
    shutil.copyfile(boot / "console.jsonl", folder / "console.jsonl")
    return folder


def _power_and_loader(folder: Path) -> tuple[dict, dict]:
    report = analyze_folder(folder, write=False).to_json()
    assert report["outcome"] == "ok"
    power = next(e for e in report["events"] if e["name"] == "power")
    return power, report["stages"][0]


def test_without_steps_only_the_relay_is_bounded(tmp_path: Path) -> None:
    """A third-party recorder writes no `timing.steps`: the command's duration is unknown
    and the power event keeps the relay's bound alone, saying why."""
    power, loader = _power_and_loader(_folder(tmp_path, None))
    assert power["uncertainty_s"] == RELAY_DELAY_BOUND_S
    assert power["power_on_command_s"] is None
    assert power["rail_within_s"] == [0.0, RELAY_DELAY_BOUND_S]
    assert "not recorded" in power["t0"]
    assert loader["start"]["uncertainty_s"] == RELAY_DELAY_BOUND_S


def test_a_recorded_power_step_widens_what_is_timed_from_it(tmp_path: Path) -> None:
    """The same boot with a `power on` step of 200 ms (stamped 0.1 ms into it)."""
    steps = [
        {"title": "power off", "start_s": -0.5, "duration_s": 0.01, "depth": 0},
        {"title": "power on", "start_s": -1e-4, "duration_s": 0.2, "depth": 0},
    ]
    timing = {"wall_s": 2.0, "off_hold_s": 0.5, "boot_s": 1.0, "overhead_s": 0.5,
              "hold_work_s": 0.0, "steps": steps}  # fmt: skip
    power, loader = _power_and_loader(_folder(tmp_path, timing))
    end = 0.2 - 1e-4
    assert power["power_on_command_s"] == pytest.approx(end)
    assert power["uncertainty_s"] == pytest.approx(end + RELAY_DELAY_BOUND_S)
    assert power["rail_within_s"] == pytest.approx([0.0, end + RELAY_DELAY_BOUND_S])
    assert loader["start"]["uncertainty_s"] >= 0.2 and loader["uncertainty_s"] >= 0.2


def test_the_analysis_reads_the_step_every_power_driver_reports() -> None:
    for name in POWER.names():
        assert step_title(POWER._drivers[name].on) == names.POWER_ON_STEP, name
