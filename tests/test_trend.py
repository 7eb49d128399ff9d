"""Change points in the boot-time history (rig.trend.stats, `rig trend`): synthetic
series with known steps, the false alarm rate with none, and end to end against a real
influxd seeded through the real sink (docs/trend.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from rig.config.influx import InfluxSettings
from rig.model import Report
from rig.sinks.grafana.generate import load_dashboards
from rig.sinks.grafana.query import TimeRange, run_queries
from rig.sinks.influx.client import Client
from rig.sinks.influx.deliver import deliver
from rig.sinks.influx.points import point_time_ns
from rig.sinks.influx.server import PrivateServer
from rig.trend.command import trend as trend_cmd
from rig.trend.stats import TrendSettings, detect, is_known, noise
from tests.influx_env import influx_server  # noqa: F401 - the fixture `server`
from tests.sample_report import sample_report

REPO = Path(__file__).resolve().parents[1]
Noise = Callable[[np.random.Generator, int], np.ndarray]
NOISES: dict[str, Noise] = {
    "normal": lambda r, n: r.normal(0, 1, n),
    "lognormal": lambda r, n: r.lognormal(0, 0.8, n),  # skewed, a few slow boots
    "uniform": lambda r, n: r.uniform(-1, 1, n),
}


def series(seed: int, n: int = 60, steps: dict[int, float] | None = None, sd: float = 3e-3):
    x = 0.11 + sd * NOISES["normal"](np.random.default_rng(seed), n)
    for at, size in (steps or {}).items():
        x[at:] += size
    return x


def test_a_known_step_is_found_at_its_boot() -> None:
    hits = 0
    for seed in range(50):
        tr = detect(series(seed, steps={35: 0.012}))  # 4 sigma
        (cp,) = tr.change_points
        assert cp.direction == "slower"
        assert abs(cp.index - 35) <= 2
        assert cp.shift_s == pytest.approx(0.012, abs=0.003)
        assert cp.median_after_s - cp.median_before_s == pytest.approx(0.012, abs=0.003)
        hits += cp.index == 35
    assert hits >= 40  # at its exact boot in most series


def test_a_faster_step_and_two_steps() -> None:
    (cp,) = detect(series(1, steps={20: -0.015})).change_points
    assert (cp.index, cp.direction) == (20, "faster")
    tr = detect(series(2, n=90, steps={30: 0.02, 60: -0.01}))
    assert [(c.index, c.direction) for c in tr.change_points] == [(30, "slower"), (60, "faster")]
    assert [c.shift_s for c in tr.change_points] == pytest.approx([0.02, -0.01], abs=0.003)
    assert [c.n_before for c in tr.change_points] == [30, 30]


def test_threshold_and_min_segment() -> None:
    x = series(3, steps={30: 0.006})
    (cp,) = detect(x).change_points
    assert abs(cp.index - 30) <= 1 and cp.shift_s < 0.008
    assert detect(x, TrendSettings(threshold_s=0.008)).change_points == []
    late = series(4, steps={54: 0.03})  # 6 boots after: fewer than min_segment
    assert detect(late).change_points == []
    assert [c.index for c in detect(late, TrendSettings(min_segment=5)).change_points] == [54]


@pytest.mark.parametrize("kind", sorted(NOISES))
def test_false_alarms_are_rare_without_a_step(kind: str) -> None:
    """No change at all, 300 series of 60 boots: a change point in under 2 % of them
    (measured over 1000 series: normal 0.5 %, log-normal 0.5 %, uniform 0.3 %; docs/trend.md)."""
    alarms = sum(
        bool(detect(NOISES[kind](np.random.default_rng(seed), 60)).change_points)
        for seed in range(300)
    )
    assert alarms / 300 < 0.02


def test_long_series_and_determinism() -> None:
    x = series(5, n=3000, steps={1000: 0.01, 2007: -0.02})
    tr = detect(x)
    assert [(c.index, c.direction) for c in tr.change_points] == [
        (1000, "slower"),
        (2007, "faster"),
    ]
    assert detect(x) == tr
    assert noise(x) == pytest.approx(3e-3, rel=0.1)
    assert detect([0.1] * 40).change_points == []  # identical boots: nothing to find
    assert detect([0.1, 0.2]).change_points == []


def test_is_known_tolerates_a_moved_change_point() -> None:
    times = list(range(0, 1000, 10))
    assert is_known(times, 50, 3, [520])  # two boots later than remembered
    assert not is_known(times, 50, 3, [700])
    assert not is_known(times, 50, 3, [])
    assert is_known(times, 0, 3, [20]) and is_known(times, 99, 3, [980])


def test_settings_are_checked() -> None:
    for bad in ({"threshold_s": -1}, {"min_segment": 3}, {"alpha": 0}, {"penalty_factor": 0}):
        with pytest.raises(ValueError):
            TrendSettings(**bad)  # type: ignore[arg-type]


# End to end: the history in a real influxd, `rig trend` reading it.

STEP_AT = 35


def stepped(index: int, board: str, step: bool) -> Report:
    r = sample_report(index, initcalls=0, board=board)
    if step and index >= STEP_AT + 1000:
        kernel = r.stages[1]
        d = float(kernel.duration_s or 0) + 0.020
        r.stages[1] = replace(kernel, duration_s=d, end_s=float(kernel.start_s or 0) + d)
        for s in r.stages[2:]:
            s.start_s, s.end_s = float(s.start_s or 0) + 0.02, float(s.end_s or 0) + 0.02
        r.power_to_ui_s = float(r.power_to_ui_s or 0) + 0.020
    return r


@pytest.fixture(scope="module")
def history(server: PrivateServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("trend")
    settings = InfluxSettings(url=server.url, database="trend")
    reports = [stepped(1000 + i, "ecovec", True) for i in range(60)]
    reports += [stepped(2000 + i, "fastboard", False) for i in range(60)]
    for r in reports:
        assert deliver(r, settings, tmp / "results").status == "written"
    cfg = tmp / "rig.toml"
    cfg.write_text(
        f'[rig]\nresults_dir = "results"\n[influx]\nurl = "{server.url}"\n'
        f'database = "{settings.database}"\n'
    )
    return {"config": cfg, "settings": settings, "reports": reports, "tmp": tmp}


def trend(history: dict[str, Any], *args: str) -> tuple[int, dict[str, Any]]:
    argv = ["--config", str(history["config"]), "--since", "3650d", "--json", *args]
    res = CliRunner().invoke(trend_cmd, argv)
    return res.exit_code, json.loads(res.stdout)


def test_trend_names_the_first_boot_after_the_step(history: dict[str, Any]) -> None:
    code, doc = trend(history)
    assert code == 0
    first = history["reports"][STEP_AT]
    by = {(s["board"], s["stage"]): s for s in doc["series"]}
    assert len(by) == 2 * 6 and all(s["boots"] == 60 for s in by.values())
    # the kernel's noise is +-5.5 ms; power_to_ui adds every stage's (sd ~12 ms)
    for stage, tolerance in (("kernel", 0.003), ("power_to_ui", 0.01)):
        (cp,) = by[("ecovec", stage)]["change_points"]
        assert (cp["run_id"], cp["direction"]) == (first.run_id, "slower")
        assert cp["time_ns"] == point_time_ns(first)
        assert cp["shift_s"] == pytest.approx(0.020, abs=tolerance)
        assert cp["p_value"] < 1e-3
    changed = {k for k, s in by.items() if s["change_points"]}
    assert changed == {("ecovec", "kernel"), ("ecovec", "power_to_ui")}
    _, one = trend(history, "--board", "ecovec", "--stage", "kernel", "--threshold", "25ms")
    assert [(s["board"], s["stage"], s["change_points"]) for s in one["series"]] == [
        ("ecovec", "kernel", [])
    ]


def test_mark_feeds_the_dashboard_annotation(history: dict[str, Any]) -> None:
    moved = point_time_ns(history["reports"][STEP_AT + 2])  # a mark an earlier run placed
    with Client(history["settings"]) as client:
        tags = "board=ecovec,variant=optimised,stage=kernel,direction=slower"
        client.write([f'change_point,{tags} text="x" {moved}'])
    code, doc = trend(history, "--mark")
    assert code == 0 and doc["marked"] == 2
    code, doc = trend(history, "--mark")  # again: replaced, not doubled
    (dash,) = [
        d for d in load_dashboards(REPO / "config/grafana/dashboards") if d["annotations"]["list"]
    ]
    t_ns = point_time_ns(history["reports"][STEP_AT])
    t = t_ns // 1_000_000
    rng = TimeRange(t - 86_400_000, t + 86_400_000)
    with Client(history["settings"]) as client:
        results = run_queries(client, history["settings"].database, dash, {}, rng, ["annotations"])
        assert [r.error for r in results] == [None, None, None]
        slower, faster, _bisect = results
        (s,) = slower.series
        rows = [dict(zip(s["columns"], v, strict=True)) for v in s["values"]]
        assert sorted(r["stage"] for r in rows) == ["kernel", "power_to_ui"]
        assert {r["run_id"] for r in rows} == {history["reports"][STEP_AT].run_id}
        assert all(r["time"] == t_ns and "slower by +" in r["text"] for r in rows)
        assert faster.series == []
        other = run_queries(
            client, history["settings"].database, dash, {"board": ["x"]}, rng, ["annotations"]
        )
        assert [r.series for r in other] == [[], [], []]


def test_fail_on_new_fails_once(history: dict[str, Any], tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    code, doc = trend(history, "--fail-on-new", "--state", str(state))
    assert code == 1
    assert sorted(n["stage"] for n in doc["new_regressions"]) == ["kernel", "power_to_ui"]
    assert json.loads(state.read_text())["schema"] == "bootrig.trend-state/1"
    code, doc = trend(history, "--fail-on-new", "--state", str(state))
    assert (code, doc["new_regressions"]) == (0, [])
    # the default state lives under the config's results_dir
    code, doc = trend(history, "--fail-on-new")
    assert code == 1 and doc["state"] == str(history["tmp"] / "results/.trend/last.json")


def test_bad_input_and_a_server_away(history: dict[str, Any], tmp_path: Path) -> None:
    for args in (["--threshold", "soon"], ["--min-segment", "2"], ["--since", "yesterday"]):
        code, doc = trend(history, *args)
        assert code == 2 and doc["kind"] == "input", args
    code, doc = trend(history, "--board", "nosuchboard")
    assert code == 2 and "no ok boots" in doc["error"]
    bare = tmp_path / "bare.toml"
    bare.write_text("[rig]\n")
    res = CliRunner().invoke(
        trend_cmd,
        ["--config", str(bare), "--json"],
    )
    assert res.exit_code == 2 and "[influx]" in json.loads(res.stdout)["error"]
    res = CliRunner().invoke(
        trend_cmd,
        ["--config", str(bare), "--json", "--skip-without-influx"],
    )
    assert res.exit_code == 0
    down = tmp_path / "down.toml"
    down.write_text('[influx]\nurl = "http://127.0.0.1:9"\ndatabase = "x"\ntimeout_s = 2\n')
    res = CliRunner().invoke(
        trend_cmd,
        ["--config", str(down), "--json"],
    )
    assert res.exit_code == 3
