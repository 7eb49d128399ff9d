"""`rig run` end to end on the simulated board, checked against its ground truth."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.measure.cycle import run_cycle
from rig.measure.pipeline import analyze_folder
from rig.model.run import Run
from tests.e2e import boundary_errors, make_config, rig_run_json, truth_boot

pytestmark = pytest.mark.slow

#: Host-clock times assume the host reads the console promptly; on a loaded 2-core CI
#: machine a read can be late by milliseconds, which no instrument on the host can see.
#: bench/accuracy.py measures the real distribution.
HOST_SCHEDULING_S = 3e-3


def within_bound(b: dict) -> bool:
    slack = HOST_SCHEDULING_S if b["source"] == "host" else 0.0
    return abs(b["error_s"]) <= b["uncertainty_s"] + slack


def measure(config: Path) -> tuple[Path, dict]:
    cfg = load_config(config)
    with Instruments(cfg) as bench:
        result = run_cycle(cfg, bench)
    return result.folder, analyze_folder(result.folder).to_json()


def test_cli_run_against_truth(tmp_path: Path) -> None:
    out = rig_run_json(make_config(tmp_path))
    folder = Path(out["folder"])
    report = out["report"]
    for name in ("run.json", "console.jsonl", "console.log", "capture.sr", "report.json"):
        assert (folder / name).is_file(), name
    assert report["schema"] == "bootrig.report/1" and report["outcome"] == "ok"

    boot = truth_boot(folder)
    fs = report["time_base"]["samplerate_hz"]
    for b in boundary_errors(report, boot):
        assert b["source"] == "gpio" or b["stage"] in ("init", "application"), b
        if b["source"] == "gpio":
            assert abs(b["error_s"]) <= 1 / fs + 1e-12, b
        assert within_bound(b), b
    truth_total = boot["markers"]["ui_ready"]
    assert abs(report["power_to_ui_s"] - truth_total) <= 1 / fs + 1e-12

    run = json.loads((folder / "run.json").read_text())
    for key in ("schema", "run_id", "board", "power_on_ns", "started_utc"):
        assert key in run
    assert run["timing"]["overhead_s"] > 0

    # Replayable: a copy of the folder, analyzed with no config, gives the same report.
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    (copy / "report.json").unlink()
    proc = subprocess.run(
        [sys.executable, "-m", "rig", "analyze", str(copy), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == report
    assert json.loads((copy / "report.json").read_text()) == report

    # The sigrok-cli engine is the reference: the same report but for its name.
    proc = subprocess.run(
        [sys.executable, "-m", "rig", "analyze", str(copy), "--engine", "sigrok", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    by_sigrok = json.loads(proc.stdout)
    assert by_sigrok["capture"].pop("engine") == "sigrok"
    assert report["capture"].pop("engine") == "fast"
    assert by_sigrok == report


@pytest.mark.parametrize(
    ("unwired", "source"),
    [(("kernel_init", "uart_tx"), "printk"), (("kernel_init",), "uart")],
)
def test_missing_gpio_channel_comes_from_its_tag(
    tmp_path: Path, unwired: tuple[str, ...], source: str
) -> None:
    """A marker without its GPIO channel is timed by its console tag: through the printk
    clock fit, or through the UART tap once the tag delay is calibrated."""
    folder, report = measure(make_config(tmp_path, drop_channels=unwired))
    assert report["outcome"] == "ok"
    assert not set(unwired) & set(report["capture"]["channels"])
    boot = truth_boot(folder)
    errs = boundary_errors(report, boot)
    from_tag = [b for b in errs if b["source"] == source]
    assert {(b["stage"], b["side"]) for b in from_tag} >= {
        ("rootfs_mount", "end"),
        ("init", "start"),
    }
    for b in errs:
        if b["source"] in ("printk", "uart"):
            assert abs(b["error_s"]) <= 100e-6, b
        assert within_bound(b), b
    fit = report["clocks"]["printk"]
    # One kernel hook stamped at its edge is left; ui_ready's userspace tag is stamped
    # after its edge by a path that varies, so it does not anchor the drift: the stated
    # drift uncertainty (the crystal prior) must cover the board's true drift.
    assert [a["name"] for a in fit["anchors"]] == ["do_mount_root"]
    assert [a["name"] for a in fit["late_anchors"]] == ["ui_ready"]
    true_drift = boot["kernel_clock"]["drift_ppm"]
    assert abs(fit["drift_ppm"] - true_drift) <= fit["drift_uncertainty_ppm"]


def test_tag_timed_boundaries_hold_boot_after_boot(tmp_path: Path) -> None:
    """Boot after boot in one session (the board's clock drift and timings differ each
    time), with kernel_init's GPIO and the UART tap unwired: every GPIO boundary within
    one sample period, every printk-derived one within 100 µs, and neither beyond the
    uncertainty the report states (bench/accuracy.py measures the distributions)."""
    unwired = ("kernel_init", "uart_tx")
    cfg = load_config(make_config(tmp_path, drop_channels=unwired, off_hold_s=0.05))
    fs = cfg.analyzer.samplerate
    seen: list[str] = []
    with Instruments(cfg) as bench:
        for _ in range(5):
            folder = run_cycle(cfg, bench).folder
            report = analyze_folder(folder).to_json()
            boot = json.loads((folder / "truth.json").read_text())["boots"][-1]
            for b in boundary_errors(report, boot):
                seen.append(b["source"])
                limit = {"gpio": 1 / fs + 1e-12, "printk": 100e-6}.get(b["source"])
                if limit is not None:
                    assert abs(b["error_s"]) <= limit, b
                    assert abs(b["error_s"]) <= b["uncertainty_s"], b
    assert seen.count("printk") >= 5 * 2 and seen.count("gpio") >= 5 * 4


def rail_after_command(run: Run, boot: dict) -> float:
    """When the rail rose after the power-on command (t = 0 of a console-only run), as
    the relay's own hardware would have it.

    The simulated relay takes a frame when the host schedules its thread: on a loaded
    host that can be 20 ms after the rig's write returned (the end of its `power on`
    step), a delay no relay module has and the rig cannot see. So the frame counts as
    taken when the write returned at the latest; the rig's own lateness before its
    write stays in, and so does the relay's simulated delay after taking the frame."""
    assert run.timing is not None and run.timing.steps is not None
    step = next(s for s in run.timing.steps if s.title == "power on")
    assert step.duration_s is not None
    written_s = step.start_s + step.duration_s
    taken_s = min((boot["relay_on_ns"] - run.power_on_ns) / 1e9, written_s)
    return taken_s + (boot["power_edge_ns"] - boot["relay_on_ns"]) / 1e9


def test_console_only_breakdown_is_honest(tmp_path: Path) -> None:
    cfg = load_config(make_config(tmp_path, analyzer="none"))
    with Instruments(cfg) as bench:
        assert bench.analyzer is None and bench.sim_control is not None
        # The simulated board still keeps its truth; ask for it around the cycle.
        assert bench.sim_control({"cmd": "arm", "wiring": {"power": 0}})["ok"]
        result = run_cycle(cfg, bench)
        truth = result.folder / "truth.json"
        assert bench.sim_control({"cmd": "stop", "truth": str(truth)})["ok"]
    report = analyze_folder(result.folder).to_json()
    assert report["outcome"] == "ok"
    assert report["time_base"]["reference"] == "host"
    assert "capture" not in report["artifacts"]
    boot = truth_boot(result.folder)
    # t = 0 is the power-on command, not the rail: shift truth by the relay's delay.
    delay = (boot["power_edge_ns"] - result.run.power_on_ns) / 1e9
    stages = {s["name"]: s for s in report["stages"]}
    for b in boundary_errors(report, boot):
        b["error_s"] -= delay
        if (b["stage"], b["side"]) == ("bootloader", "start"):  # the power-on itself
            b["error_s"] += delay - rail_after_command(result.run, boot)
        assert within_bound(b), b
    # Between two printk stamps the host's latency cancels: rootfs_mount is known to
    # far better than the console's latency band.
    rootfs = stages["rootfs_mount"]
    assert rootfs["source"] == "printk"
    assert rootfs["uncertainty_s"] < 0.5 * report["clocks"]["host"]["uncertainty_s"]
    true = {s["name"]: s for s in boot["stages"]}
    assert abs(rootfs["duration_s"] - true["rootfs_mount"]["duration_s"]) <= rootfs["uncertainty_s"]


def test_bare_capture_needs_no_config(tmp_path: Path) -> None:
    """Any .sr with the contract channel names (docs/contract.md) can be analyzed alone:
    markers from the GPIO channels, the console from the tapped UART line."""
    folder, report = measure(make_config(tmp_path))
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(folder / "capture.sr", bare / "capture.sr")
    proc = subprocess.run(
        [sys.executable, "-m", "rig", "analyze", str(bare), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    alone = json.loads(proc.stdout)
    assert alone["outcome"] == "ok" and alone["console"]["uart_tap"]["baud_detected"]
    for mine, theirs in zip(alone["stages"], report["stages"], strict=True):
        assert mine["name"] == theirs["name"]
        assert mine["duration_s"] == pytest.approx(theirs["duration_s"], abs=2e-6)
        assert {mine["start"]["source"], mine["end"]["source"]} <= {"gpio", "uart"}


def test_panic_ends_the_cycle_without_waiting_out_the_timeout(tmp_path: Path) -> None:
    extra = '\n[sim.faults]\npanic = 1.0\npanic_stages = ["kernel"]\n'
    cfg = load_config(make_config(tmp_path, extra=extra))
    assert cfg.boot_timeout_s >= 30
    with Instruments(cfg) as bench:
        t0 = time.monotonic()
        result = run_cycle(cfg, bench)
        took = time.monotonic() - t0
    assert not result.ui_seen and result.run.panic_seen_ns is not None
    assert took < 5, took
    assert analyze_folder(result.folder).outcome == "panic"


def test_analysis_table_of_the_config_is_honoured_by_rig_run(tmp_path: Path) -> None:
    """`[analysis] top_n = 3` in the rig config: the run's report lists three rows, and
    a later `rig analyze` of the folder (from run.json's snapshot) keeps them three."""
    out = rig_run_json(make_config(tmp_path, extra="\n[analysis]\ntop_n = 3\n"))
    assert len(out["report"]["top"]) == 3
    again = analyze_folder(Path(out["folder"]), write=False)
    assert len(again.top) == 3
