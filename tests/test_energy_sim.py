"""Energy per stage end to end: config/examples/sim-psu.toml powers the simulated board
through its SCPI supply (real PyVISA + pyvisa-py over 127.0.0.1), the cycle writes
power.jsonl, the analysis gives each stage's energy, and truth.json says how right it is."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rig.instruments.power_visa  # noqa: F401 - registers the "visa" power driver
from rig.analysis.energy import add_energy
from rig.analysis.events import build_timebase
from rig.analysis.lines import split_lines
from rig.artifacts import powerlog, rundir
from rig.artifacts.fastscan import scan_capture
from rig.config.load import RigConfig
from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.measure.cycle import run_cycle
from rig.measure.pipeline import analyze_folder
from simboard.current import WOBBLE_HZ

ROOT = Path(__file__).parent.parent
CONFIG = ROOT / "config" / "examples" / "sim-psu.toml"
FAST = ROOT / "config" / "boards" / "fast.toml"

pytestmark = pytest.mark.slow

#: Readings at least twice per period of the board's fastest wobble (simboard.current)
#: follow its draw, so such a stage's energy is close to the truth whatever it states.
#: A loaded host can hold the sampler up for tens of ms (a whole stage, at worst): there
#: the energy is only as good as the uncertainty the rig states, which grows with the gap.
DENSE_GAP_S = 1 / (2 * WOBBLE_HZ[1])
#: The slow supply: 40 measurements a second, two (MEAS:CURR?, MEAS:VOLT?) a reading.
SLOW_RATE = 40


def _config(tmp_path: Path, rate: float = 0.0) -> RigConfig:
    # A slow supply needs a reading after the last stage: keep capturing a while.
    sets = [f'rig.results_dir="{tmp_path}"', "power.off_hold_s=0.1", "timeouts.post_ui_s=0.2"]
    cfg = load_config(CONFIG, board=FAST, overrides=sets)
    if rate:  # a slow supply: at most `rate` measurements a second
        assert cfg.sim is not None
        opts = {**cfg.sim.options, "supply_rate": rate}
        cfg = dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, options=opts))
    return cfg


def _measure(cfg: RigConfig, cycles: int) -> list[Path]:
    with Instruments(cfg) as bench:
        return [run_cycle(cfg, bench).folder for _ in range(cycles)]


def _energy(folder: Path, with_console_clock: bool) -> tuple[dict[str, Any], list[dict]]:
    """The report with energies, as build_report gives them (the timebase's host map),
    or from the readings' own power edge; and the truth's stages."""
    report = analyze_folder(folder, write=False)
    run = rundir.read_run(folder)
    records = powerlog.read(folder)
    assert records
    host = None
    if with_console_clock:
        scan = scan_capture(folder / rundir.CAPTURE, 1000.0, baud=115200)
        chunks = rundir.read_console(folder)
        lines = split_lines(chunks)
        t0 = run.power_on_ns
        host = build_timebase(scan.markers, lines, t0, 115200, scan.uart, chunks).host
    add_energy(report, run.power_on_ns, records, host)
    truth = json.loads((folder / "truth.json").read_text())["boots"][0]["stages"]
    return report.to_json(), truth


def widest_gap(report: dict[str, Any], stage: dict[str, Any]) -> float:
    """The longest stretch of a stage without a reading (from its ends too)."""
    t = np.array(report["power"]["trace"]["t_s"])
    assert len(t) == report["power"]["readings"] - report["power"]["late_readings_dropped"]
    s, e = stage["start_s"], stage["end_s"]
    return float(np.diff([s, *t[(t > s) & (t < e)], e]).max())


def test_stage_energy_within_two_percent_of_truth(tmp_path: Path) -> None:
    folders = _measure(_config(tmp_path), cycles=3)
    for folder in folders:
        run = rundir.read_run(folder)
        assert run.instruments is not None
        dev = run.instruments["power_device"]
        assert (dev["model"], dev["serial"]) == ("SIM-PSU1", "SIM00000001") and dev["firmware"]
        assert run.instruments["power_readings"]["file"] == "power.jsonl"
        for console_clock in (True, False):
            report, truth = _energy(folder, console_clock)
            source = report["power"]["clock"]["source"]
            assert source.startswith("console") if console_clock else source == "power_edge"
            assert len(report["stages"]) == len(truth) == 5
            for st, tr in zip(report["stages"], truth, strict=True):
                err = abs(st["energy_j"] - tr["energy_j"])
                u = st["energy_uncertainty_j"]
                where = (folder.name, st["name"], console_clock, st["energy_j"], tr["energy_j"], u)
                assert err <= 0.02 * tr["energy_j"] + u, where
                if console_clock:  # what the report gives: within its own bound, and 2 %
                    assert err <= u, where
                    if widest_gap(report, st) > DENSE_GAP_S:
                        continue  # the host held the sampler up: the bound above is all
                    # ... and close even without it: the inrush (1.4 % of the fast bootloader)
                    # is over before the first reading, and only stated.
                    assert err <= (0.04 if st["start_s"] <= 0 else 0.03) * tr["energy_j"], where
                    dur = tr["end_s"] - tr["start_s"]
                    assert st["mean_current_a"] == pytest.approx(
                        tr["energy_j"] / dur / 4.98, rel=0.03
                    )


def test_a_slow_supply_states_a_larger_uncertainty(tmp_path: Path) -> None:
    fast = _measure(_config(tmp_path / "fast"), cycles=1)[0]
    slow = _measure(_config(tmp_path / "slow", rate=SLOW_RATE), cycles=1)[0]
    (rf, _), (rs, truth_s) = _energy(fast, True), _energy(slow, True)
    # Back to back, a reading takes the slow supply 2 / SLOW_RATE s at least.
    assert rs["power"]["rate_hz"] <= SLOW_RATE / 2 + 1e-9
    for f, s, tr in zip(rf["stages"], rs["stages"], truth_s, strict=True):
        rel_f = f["energy_uncertainty_j"] / f["energy_j"]
        rel_s = s["energy_uncertainty_j"] / s["energy_j"]
        # Where the fast supply's readings followed the draw and their gaps were at most
        # half the slow one's (a loaded host can hold the sampler up as long as the slow
        # supply takes): the sparse readings state more than twice the uncertainty.
        gap_f, gap_s = widest_gap(rf, f), widest_gap(rs, s)
        if gap_f <= min(DENSE_GAP_S, gap_s / 2):
            assert rel_s > 2 * rel_f, (s["name"], rel_s, rel_f, gap_f, gap_s)
        assert (
            abs(s["energy_j"] - tr["energy_j"]) <= 0.02 * tr["energy_j"] + s["energy_uncertainty_j"]
        )
