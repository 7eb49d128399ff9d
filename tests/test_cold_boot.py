"""Cold-boot gating (docs/cold-boot.md): the rail's off-time, rise time and
back-powering, measured from a supply's readings, the capture or the power commands'
stamps; a boot that was not a true cold boot is flagged and kept out of statistics.

Unit tests of rig.analysis.coldboot on hand-made readings, then end to end on the
simulated board through its SCPI supply (real PyVISA + pyvisa-py over 127.0.0.1):
a normal cycle, a back-powered board in a short soak, a too-short off-hold."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rig.instruments.power_visa  # noqa: F401 - registers the "visa" power driver
from rig.analysis.coldboot import assess, readings
from rig.compare.inputs import Boot, Source, split
from rig.errors import InputError
from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.measure.cycle import run_cycle
from rig.measure.pipeline import analyze_folder
from rig.model import MarkerScan, Report, Run
from rig.model.capture import PowerReading
from rig.model.options import AnalysisOptions
from rig.model.report import ColdBoot
from rig.model.run import RunStep, RunTiming
from tests.conftest import REPO

CONFIG = REPO / "config" / "examples" / "sim-psu.toml"
FAST = REPO / "config" / "boards" / "fast.toml"
MS = 1_000_000
ON = 10_000 * MS  # host ns of the power-on command in the unit tests


def _recs(t0_ms: float, t1_ms: float, v: float, step_ms: float = 3.0) -> list[PowerReading]:
    """Readings every `step_ms` from t0 to t1 (ms from ON), 1 ms per query."""
    out, t = [], t0_ms
    while t < t1_ms:
        req = ON + round(t * MS)
        out.append(PowerReading(req + MS // 2, v, 0.0, req, req + MS))
        t += step_ms
    return out


def _run(off_ms: float | None = -500.0, **kw: Any) -> Run:
    off = None if off_ms is None else ON + round(off_ms * MS)
    return Run(run_id="r", board="b", started_utc=None, power_on_ns=ON, power_off_ns=off, **kw)


def _assess(run: Run, power: Any = None, hold: Any = None, scan: Any = None, edge: Any = None,
            min_off_s: float = 0.1, rail_off_v: float = 0.3) -> ColdBoot:  # fmt: skip
    cb = assess(run, scan, edge, power, hold, min_off_s, rail_off_v)
    assert cb is not None
    return cb


def test_supply_readings_give_off_time_rise_and_a_true_cold_boot() -> None:
    hold = [*_recs(-499, -497, 4.9), *_recs(-496, -1, 0.0)]  # falls right after the off
    boot = _recs(2, 300, 5.0)
    cb = _assess(_run(), boot, hold)
    assert cb.off_time_source == "supply" and cb.off_time_bound is None
    assert cb.off_time_uncertainty_s is not None and cb.off_time_s is not None
    assert abs(cb.off_time_s - 0.497) <= cb.off_time_uncertainty_s < 0.006
    assert cb.rail_min_v == 0.0 and cb.back_powered is False
    # The true rise is somewhere between the last low and the first high reading.
    assert cb.rise_time_s is not None and 0 < cb.rise_time_s < 0.006
    assert cb.true_cold_boot is True and cb.reasons == []


def test_back_powered_rail_is_flagged() -> None:
    cb = _assess(_run(), _recs(2, 300, 5.0), _recs(-499, -1, 1.1))
    assert cb.back_powered is True and cb.rail_min_v == 1.1
    assert cb.true_cold_boot is False and cb.off_time_s == 0.0
    assert [r.split(":")[0] for r in cb.reasons] == ["back_powered"]


def test_short_off_time_from_the_supply_is_flagged() -> None:
    cb = _assess(_run(-40), _recs(2, 300, 5.0), _recs(-39, -1, 0.0))
    assert cb.off_time_s is not None and cb.off_time_s < 0.1
    assert cb.true_cold_boot is False and cb.reasons[0].startswith("short_off")


def test_relay_stamps_are_an_upper_bound() -> None:
    short = _assess(_run(-30))
    assert (short.off_time_source, short.off_time_bound) == ("relay", "upper")
    assert short.off_time_s == 0.03 and short.true_cold_boot is False
    # Long enough by the stamps, but nothing says the rail fell to 0 V: unknown.
    long = _assess(_run(-500))
    assert long.true_cold_boot is None and long.back_powered is None
    assert all(r.startswith("unknown") for r in long.reasons)


def test_relay_stamp_of_an_older_run_is_its_power_off_step() -> None:
    steps = [RunStep("power off", -0.6, 0.001, 0), RunStep("off-hold", -0.599, 0.5, 0)]
    timing = RunTiming(1.0, 0.5, 0.3, 0.2, 0.0, steps=steps)
    cb = _assess(_run(None, timing=timing))
    assert cb.off_time_source == "relay" and cb.off_time_s == pytest.approx(0.6)


def _scan(downs: tuple[int, ...], up: int) -> MarkerScan:
    return MarkerScan(1_000_000, 2_000_000, ("power",), (up,), downs)


def test_capture_that_saw_the_fall_times_the_off_time() -> None:
    cb = _assess(_run(None), scan=_scan((100_000,), 600_000), edge=600_000)
    assert (cb.off_time_source, cb.off_time_bound) == ("capture", None)
    assert cb.off_time_s == pytest.approx(0.5) and cb.off_time_uncertainty_s == 2e-6
    # Digital levels say nothing of volts: back-powering stays unknown.
    assert cb.back_powered is None and cb.true_cold_boot is None
    # Armed after the off-hold: low from the first sample is a lower bound.
    lower = _assess(_run(-30), scan=_scan((), 200_000), edge=200_000)
    assert lower.off_time_source == "relay"  # the stamps bound it from above: 30 ms
    assert lower.true_cold_boot is False


def test_no_evidence_no_section() -> None:
    assert assess(_run(None), None, None, None, None, 0.1, 0.3) is None


def test_options_are_checked_with_their_key() -> None:
    opts = AnalysisOptions.from_mapping({"min_off_s": 0.4, "rail_off_v": 0.5})
    assert (opts.min_off_s, opts.rail_off_v) == (0.4, 0.5)
    with pytest.raises(InputError, match=r"key 'analysis.rail_off_v': expected a finite number"):
        AnalysisOptions.from_mapping({"rail_off_v": "low"})


def test_readings_without_windows_use_their_stamp() -> None:
    (r,) = readings([PowerReading(5, 1.0, 0.0)])
    assert (r.lo, r.hi, r.v) == (5, 5, 1.0)


def test_report_without_the_section_is_unchanged() -> None:
    doc = {"schema": "bootrig.report/1", "outcome": "ok", "power_to_ui_s": 1.0, "stages": []}
    report = Report.from_json(doc)
    assert report.cold_boot is None and not report.not_cold
    assert "cold_boot" not in report.to_json()


def test_compare_lists_a_flagged_boot_as_excluded_unless_asked() -> None:
    boots = [
        Boot("a", "x", "ok", {"power_to_ui": 1.0}),
        Boot("b", "x", "ok", {"power_to_ui": 0.5}, not_cold="back_powered"),
    ]
    src = split(boots, Source("s", "runs", "x"), 0)
    assert [b.id for b in src.boots] == ["a"]
    assert src.excluded == [("b", "not a cold boot (back_powered)")]
    warm = split(boots, Source("s", "runs", "x"), 0, include_warm=True)
    assert [b.id for b in warm.boots] == ["a", "b"] and warm.excluded == []


# -- end to end on the simulated board -------------------------------------------------


def _cycles(tmp: Path, hold_s: float, n: int, sets: tuple[str, ...] = ()) -> list[Path]:
    overrides = [f'rig.results_dir="{tmp}"', f"power.off_hold_s={hold_s}", *sets]
    cfg = load_config(CONFIG, board=FAST, overrides=overrides)
    with Instruments(cfg) as bench:
        return [run_cycle(cfg, bench).folder for _ in range(n)]


def _truth(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "truth.json").read_text())["boots"][0]  # type: ignore[no-any-return]


@pytest.mark.slow
def test_normal_cycle_is_a_true_cold_boot_with_its_off_time(tmp_path: Path) -> None:
    hold = 0.3
    folders = _cycles(tmp_path, hold, 2)
    for k, folder in enumerate(folders):
        report = analyze_folder(folder, write=False)
        cb = report.cold_boot
        assert report.outcome == "ok" and cb is not None, report.analysis.notes
        assert (cb.true_cold_boot, cb.back_powered, cb.off_time_source) == (True, False, "supply")
        assert cb.rail_min_v is not None and abs(cb.rail_min_v) < 0.01
        assert cb.off_time_s is not None and cb.off_time_uncertainty_s is not None
        u = cb.off_time_uncertainty_s
        # At least the configured hold, at most the power commands' interval (from the
        # OUTP OFF that began the hold readings: for the first cycle, the bench's setup).
        run = json.loads((folder / "run.json").read_text())
        readings = run["instruments"]["power_readings"]
        interval = (run["power_on_ns"] - readings["hold_off_ns"]) / 1e9
        assert readings["hold_off_ns"] <= run["power_off_ns"]
        assert hold - u <= cb.off_time_s <= interval + u
        assert (folder / "power_hold.jsonl").is_file() and readings["hold_readings"] > 10
        truth = _truth(folder)
        if k > 0:  # the simulator knows when the rail fell before this boot
            assert abs(cb.off_time_s - truth["off_before_s"]) <= u
        # The simulated rail steps up (rise 0): within the stated upper bound.
        assert cb.rise_time_s is not None and 0.0 <= cb.rise_time_s < 0.1
        assert cb.rise_time_source == "supply (upper bound)"


@pytest.mark.slow
def test_too_short_off_hold_is_flagged_by_off_time(tmp_path: Path) -> None:
    folders = _cycles(tmp_path, 0.0, 2, ("analysis.min_off_s=0.4",))
    report = analyze_folder(folders[1], write=False)
    cb = report.cold_boot
    assert cb is not None and report.outcome == "ok"  # the board's outcome is kept
    assert cb.true_cold_boot is False and cb.back_powered is False
    assert cb.reasons and cb.reasons[0].startswith("short_off")
    assert cb.off_time_s is not None and cb.off_time_uncertainty_s is not None
    assert abs(cb.off_time_s - _truth(folders[1])["off_before_s"]) <= cb.off_time_uncertainty_s
    assert report.not_cold


def _back_powered_config(tmp: Path) -> Path:
    text = CONFIG.read_text()
    text = text.replace('results_dir = "../../results"', f'results_dir = "{tmp / "results"}"')
    text = text.replace('profile = "../boards/ecovec-optimised.toml"', f'profile = "{FAST}"')
    text = text.replace("seed = 1\n", "seed = 1\nback_power_v = 1.1\n", 1)
    text = text.replace("off_hold_s = 0.5", "off_hold_s = 0.2")
    path = tmp / "back-powered.toml"
    path.write_text(text)
    return path


@pytest.mark.slow
def test_back_powered_board_is_flagged_and_left_out_of_soak_statistics(tmp_path: Path) -> None:
    config = _back_powered_config(tmp_path)
    cmd = [sys.executable, "-m", "rig.soak", "--config", str(config), "--cycles", "2", "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out["outcomes"] == {"ok": 2}  # the board's outcome is kept
    assert out["not_cold"] == 2
    kernel = next(s for s in out["stages"] if s["name"] == "kernel")
    assert kernel["n"] == 0 and out["power_to_ui"]["n"] == 0
    folder = Path(out["folder"])
    journal = [json.loads(ln) for ln in (folder / "journal.jsonl").read_text().splitlines()]
    cycles = [r for r in journal if r["type"] == "cycle"]
    assert [r["cold_boot"] for r in cycles] == [False, False]
    for rec in cycles:
        report = json.loads((folder / rec["run_id"] / "report.json").read_text())
        cb = report["cold_boot"]
        assert cb["back_powered"] is True and cb["true_cold_boot"] is False
        assert abs(cb["rail_min_v"] - 1.1) < 0.02
        assert _truth(folder / rec["run_id"])["back_power_v"] == 1.1
    # rig compare leaves them out too, and says why; --include-warm counts them.
    run = [sys.executable, "-m", "rig", "compare", str(folder), "--", str(folder), "--json"]
    cmp = subprocess.run(run, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert cmp.returncode == 2 and "no boot counts" in cmp.stdout + cmp.stderr
    cmp = subprocess.run([*run, "--include-warm", "--warmup", "0"], capture_output=True,
                         text=True, timeout=60, cwd=REPO)  # fmt: skip
    # Two boots against two cannot reach a verdict: counted, and said to be inconclusive.
    assert cmp.returncode == 4, cmp.stdout + cmp.stderr
    counted = json.loads(cmp.stdout)
    assert counted["before"]["boots"] == 2 and counted["after"]["boots"] == 2
    assert {s["verdict"] for s in counted["stages"]} == {"inconclusive"}


def test_profile_back_power_is_checked(tmp_path: Path) -> None:
    from rig.errors import ConfigError
    from simboard.timeline import load

    prof = load(FAST)
    assert prof.power.back_power_v == 0.0
    assert prof.with_overrides(back_power_v=1.1).power.back_power_v == 1.1
    bad = tmp_path / "bad.toml"
    bad.write_text(FAST.read_text().replace("[power]\n", "[power]\nback_power_v = -1\n", 1))
    with pytest.raises(ConfigError, match=r"power.back_power_v"):
        load(bad)
