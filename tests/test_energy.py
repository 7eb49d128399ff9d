"""Energy per stage from supply readings (rig.analysis.energy), on synthetic readings
whose true energy is known exactly, and power.jsonl itself."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rig.analysis import energy
from rig.analysis.hostclock import HostMap
from rig.artifacts import powerlog
from rig.errors import ArtifactError
from rig.model.capture import PowerReading
from rig.model.clocks import PowerClock
from rig.model.report import Boundary, Report, Stage, TimeBase

#: Stage ends (s) and levels (W at 5 V): a board whose draw steps at its boundaries.
ENDS = [0.05, 0.17, 0.20, 0.24, 0.30]
AMPS = [0.28, 0.46, 0.38, 0.42, 0.62]
VOLTS = 5.0
ZERO_NS = 10_000_000_000  # host ns of the power edge


def true_amps(t: np.ndarray) -> np.ndarray:
    idx = np.clip(np.searchsorted(ENDS, t, side="right"), 0, len(AMPS) - 1)
    wobble = 1 + 0.05 * np.sin(2 * math.pi * 7 * t)
    return np.where(t >= 0, np.asarray(AMPS)[idx] * wobble, 0.0)


def true_energy(s: float, e: float) -> float:
    t = np.linspace(s, e, 200_001)
    return float(np.trapezoid(VOLTS * true_amps(t), t))


def records(rate_hz: float, window_s: float = 1e-3, start_s: float = -0.004) -> list[PowerReading]:
    """What a supply answering every 1/rate s reads: the mean over each window."""
    out = []
    for t1 in np.arange(start_s + window_s, 0.33, 1 / rate_hz):
        tt = np.linspace(t1 - window_s, t1, 50)
        a = float(true_amps(tt).mean())
        req, ans = ZERO_NS + round((t1 - window_s) * 1e9), ZERO_NS + round(t1 * 1e9)
        out.append(PowerReading((req + ans) // 2, VOLTS, a, req, ans))
    return out


def report_stages() -> list[dict[str, Any]]:
    starts = [0.0, *ENDS[:-1]]
    names = ["bootloader", "kernel", "rootfs_mount", "init", "application"]
    return [
        {"name": n, "start_s": s, "end_s": e, "start": {"uncertainty_s": 1e-6}}
        for n, s, e in zip(names, starts, ENDS, strict=True)
    ]


def analyze(recs: list[PowerReading], clock_u: float = 0.0) -> list[dict[str, Any]]:
    clock = PowerClock("test", clock_u, float(ZERO_NS))
    r = energy.place(recs, clock)
    out = []
    for st in report_stages():
        se = energy.stage_energy(r, st["start_s"], st["end_s"], clock_u, (1e-6, 1e-6))
        assert se is not None
        out.append(
            {**st, **dataclasses.asdict(se), "truth": true_energy(st["start_s"], st["end_s"])}
        )
    return out


def test_dense_readings_give_each_stage_within_half_a_percent() -> None:
    stages = analyze(records(300))
    first = stages[0]
    for st in stages:
        err = st["energy_j"] - st["truth"]
        assert abs(err) <= 0.005 * st["truth"], st
        assert abs(err) <= st["energy_uncertainty_j"], st
        # From the power edge to the first reading (3 ms) nothing is known: inrush.
        assert st["energy_uncertainty_j"] < (0.1 if st is first else 0.05) * st["truth"], st
    assert first["peak_current_a"] == pytest.approx(AMPS[0] * 1.05, rel=0.01)
    assert first["readings"] == pytest.approx(0.05 * 300, abs=1)


def test_mean_current_is_the_charge_over_the_duration() -> None:
    for st in analyze(records(300)):
        dur = st["end_s"] - st["start_s"]
        t = np.linspace(st["start_s"], st["end_s"], 100_001)
        mean = float(np.trapezoid(true_amps(t), t)) / dur
        assert st["mean_current_a"] == pytest.approx(mean, rel=0.005)


def test_sparse_readings_state_a_larger_uncertainty_that_still_holds() -> None:
    dense, sparse = analyze(records(300)), analyze(records(12))
    for d, s in zip(dense, sparse, strict=True):
        assert s["energy_uncertainty_j"] > 2 * d["energy_uncertainty_j"], s["name"]
        assert abs(s["energy_j"] - s["truth"]) <= s["energy_uncertainty_j"], s
    # A stage no reading falls in is stated as unknown up to its neighbours' level.
    empty = [s for s in sparse if s["readings"] == 0]
    assert empty and all(s["peak_current_a"] is None for s in empty)
    for s in empty:
        assert s["energy_uncertainty_j"] >= s["truth"] * 0.5
    # A reading whose window holds the power edge counts on neither side; before the
    # edge the board drew nothing.
    r = energy.place(records(300, window_s=0.02), PowerClock("test", 0.0, ZERO_NS))
    se = energy.stage_energy(r, 0.0, 0.01, 0.0)
    assert se is not None and se.readings == 0
    assert abs(se.energy_j - true_energy(0.0, 0.01)) <= se.energy_uncertainty_j


def test_clock_uncertainty_is_charged_where_the_draw_steps() -> None:
    exact, shaky = analyze(records(300)), analyze(records(300), clock_u=2e-3)
    for a, b in zip(exact, shaky, strict=True):
        assert b["energy_uncertainty_j"] > a["energy_uncertainty_j"]
    # rootfs_mount steps by (0.46 - 0.38) * 5 W in, (0.42 - 0.38) * 5 W out: 2 ms each.
    extra = shaky[2]["energy_uncertainty_j"] - exact[2]["energy_uncertainty_j"]
    assert extra == pytest.approx(2e-3 * 5 * (0.08 + 0.04), rel=0.5)


def test_a_reading_answered_late_is_not_used() -> None:
    """When a reading was taken within a long request-to-answer window is unknown (the
    supply or the network stalled): it is dropped, and the gap it leaves is charged."""
    recs = records(300)
    clock = PowerClock("test", 0.0, float(ZERO_NS))
    base = energy.stage_energy(energy.place(recs, clock), 0.05, 0.17, 0.0)
    for k in range(20, 30):  # kernel readings, answered 40 ms late with a bootloader value
        req, ans = recs[k].t_req_ns, recs[k].t_ans_ns
        assert req is not None and ans is not None
        late = ans + 40_000_000
        recs[k] = replace(recs[k], t_ns=(req + late) // 2, a=AMPS[0], t_ans_ns=late)
    r = energy.place(recs, clock)
    assert r.dropped == 10 and len(r.t_s) == len(recs) - 10
    assert r.place_u_s == pytest.approx(0.5e-3)  # a 1 ms window around each reading
    late = energy.stage_energy(r, 0.05, 0.17, 0.0)
    assert base is not None and late is not None
    assert late.energy_j == pytest.approx(base.energy_j, rel=0.01)
    assert late.energy_uncertainty_j > base.energy_uncertainty_j
    assert late.readings == base.readings - 10


def test_the_clock_from_the_readings_brackets_the_power_edge() -> None:
    recs = records(300)
    clock = energy.clock_from_edge(recs, ZERO_NS - 2_000_000)
    assert abs(clock.zero_ns - ZERO_NS) <= clock.uncertainty_s * 1e9
    assert clock.uncertainty_s < 4e-3
    with pytest.raises(ValueError, match="never rose"):
        energy.clock_from_edge([replace(r, a=0.0) for r in recs], ZERO_NS)


def test_the_clock_from_the_console_host_map() -> None:
    """ref = host - offset; a console byte's least delay is offset + one char time."""
    offset_s = 123.456
    char = 10 / 115200
    low = offset_s + char - 60e-6
    host = HostMap(low, low + 16e-3, 20, char, least_s=offset_s + char + 240e-6)
    clock = energy.clock_from_console(host)
    assert clock is not None and clock.source == "console"
    assert abs(clock.zero_ns / 1e9 - offset_s) <= clock.uncertainty_s + 1e-9
    assert energy.clock_from_console(HostMap(0.0, 16e-3, 1, char)) is None
    host_clock = energy.pick_clock("host", 42, [], None)
    assert (host_clock.source, host_clock.uncertainty_s, host_clock.zero_ns) == ("host", 0.0, 42.0)


def model_stages() -> list[Stage]:
    """report_stages() as the report model's stages."""
    return [
        Stage(
            name=d["name"],
            start_s=d["start_s"],
            end_s=d["end_s"],
            start=Boundary("power", "host", d["start"]["uncertainty_s"]),
        )
        for d in report_stages()
    ]


def test_add_energy_fills_the_report_stages() -> None:
    model = Report(outcome="ok", time_base=TimeBase("host", "power-on"), stages=model_stages())
    model.stages.append(Stage(name="total", start_s=None, end_s=None))
    energy.add_energy(model, ZERO_NS, records(300))
    report = model.to_json()
    for st in report["stages"][:-1]:
        assert st["energy_j"] == pytest.approx(true_energy(st["start_s"], st["end_s"]), rel=0.01)
        assert {"energy_uncertainty_j", "mean_current_a", "peak_current_a"} <= set(st)
    assert "energy_j" not in report["stages"][-1]
    power = report["power"]
    assert power["clock"]["source"] == "host" and power["readings"] == len(records(300))
    assert power["rate_hz"] == pytest.approx(300, rel=0.01)
    json.dumps(report, allow_nan=False)  # plain JSON numbers, no numpy leftovers
    trace = power["trace"]
    assert len(trace["t_s"]) == len(trace["a"]) == len(trace["v"]) == len(records(300))
    assert trace["t_s"] == sorted(trace["t_s"])
    untouched_model = Report(outcome="ok", stages=model_stages())
    energy.add_energy(untouched_model, 0, [])
    untouched = untouched_model.to_json()
    assert "power" not in untouched and "energy_j" not in untouched["stages"][0]


def test_powerlog_round_trip_and_errors(tmp_path: Path) -> None:
    recs = records(50)
    powerlog.write(tmp_path, recs)
    assert powerlog.read(tmp_path) == recs
    assert powerlog.read(tmp_path / "nowhere") is None
    (tmp_path / powerlog.POWER_JSONL).write_text('{"t_ns": 1, "v": 5.0, "a": 0.1}\n{"t_ns": 2}\n')
    with pytest.raises(ArtifactError, match=r"power.jsonl:2: expected"):
        powerlog.read(tmp_path)
    # A request or answer stamp that is not an integer of ns is refused with its line.
    (tmp_path / powerlog.POWER_JSONL).write_text(
        '{"t_ns": 1, "v": 5.0, "a": 0.1, "t_req_ns": "soon"}\n'
    )
    with pytest.raises(ArtifactError, match=r"power.jsonl:1: expected"):
        powerlog.read(tmp_path)


def test_a_long_trace_keeps_every_peak() -> None:
    """Beyond TRACE_POINTS readings the trace thins out, but a one-reading inrush spike
    stays in it: each bucket keeps its peak."""
    n = 3 * energy.TRACE_POINTS + 7
    a = np.full(n, 0.2)
    a[1234] = 3.0
    r = energy.Readings(np.arange(n) / 1000.0, np.full(n, 5.0), a, np.zeros(n))
    trace = energy.trace(r)
    assert len(trace["t_s"]) == energy.TRACE_POINTS
    assert max(trace["a"]) == 3.0 and 1.234 in trace["t_s"]
