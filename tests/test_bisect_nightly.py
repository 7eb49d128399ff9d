"""The nightly's bisect (issue 24 item 2): when `rig trend --fail-on-new` fires, the
nightly's sh function runs `rig bisect` on the simulator between the commits of the night
before the change point and of its night, and the answer lands in a real influxd as the
`bisect` annotation the boot-time dashboard shows beside the change point."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rig.model import Report
from rig.sinks.grafana.generate import load_dashboards
from rig.sinks.grafana.query import TimeRange, run_queries
from rig.sinks.influx.client import Client
from rig.sinks.influx.deliver import deliver
from rig.sinks.influx.server import PrivateServer
from rig.trend.command import trend as trend_cmd
from tests.bisect_env import state
from tests.e2e import REPO, make_config
from tests.influx_env import influx_server, settings_for  # noqa: F401 - the fixture `server`
from tests.sample_report import sample_report
from tests.test_bisect_sim import CULPRIT, FAST_ARGS, HISTORY, make_repo

NIGHTLY = REPO / "config" / "nightly"
STEP_AT = 30  # the history's first slower boot
STAMP = "%Y%m%dT%H%M%SZ"


def _report(i: int) -> Report:
    """Boot i of the history: the kernel stage 20 ms slower from STEP_AT on."""
    r = sample_report(i, initcalls=0, board="ecovec")
    if i >= STEP_AT:
        k = r.stages[1]
        d = float(k.duration_s or 0) + 0.020
        r.stages[1] = replace(k, duration_s=d, end_s=float(k.start_s or 0) + d)
        for s in r.stages[2:]:
            s.start_s, s.end_s = float(s.start_s or 0) + 0.02, float(s.end_s or 0) + 0.02
        r.power_to_ui_s = float(r.power_to_ui_s or 0) + 0.020
    return r


def _stamp(ns: int, minutes: float) -> str:
    t = datetime.fromtimestamp(ns / 1e9, UTC) + timedelta(minutes=minutes)
    return t.strftime(STAMP)


@pytest.fixture
def night(server: PrivateServer, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    """A history with a new regression, the trend gate's answer, and the nights' records."""
    settings = settings_for(server, request)
    reports = [_report(i) for i in range(60)]
    for r in reports:
        assert deliver(r, settings, tmp_path / "delivered").status == "written"
    influx = f'[influx]\nurl = "{server.url}"\ndatabase = "{settings.database}"\n'
    config = make_config(tmp_path, extra=influx)
    out = tmp_path / "results" / "nightly" / "tonight"
    out.mkdir(parents=True)
    # as nightly.sh runs it: --mark --fail-on-new, over the kernel stage only here
    res = CliRunner().invoke(trend_cmd, [
        "--config", str(config), "--since", "3650d", "--stage", "kernel", "--mark",
        "--fail-on-new", "--json",
    ])  # fmt: skip
    assert res.exit_code == 1, res.output
    (out / "trend.json").write_text(res.stdout)
    (cp,) = json.loads(res.stdout)["new_regressions"]
    assert cp["run_id"] == reports[STEP_AT].run_id
    repo, commits = make_repo(tmp_path)
    # Three nights: the one before the change point ran the good commit, the change
    # point's night the bad one, a later night something else again.
    nights = tmp_path / "results" / "nightly"
    for minutes, commit in ((-24 * 60, commits[0]), (-5, commits[-1]), (24 * 60, commits[3])):
        n = nights / _stamp(cp["time_ns"], minutes)
        n.mkdir()
        (n / "status.json").write_text(json.dumps({"stamp": n.name, "commit": commit}))
    (nights / "latest").symlink_to(n.name)
    return {
        "settings": settings, "config": config, "out": out, "nights": nights, "cp": cp,
        "repo": repo, "commits": commits, "tmp": tmp_path,
    }  # fmt: skip


def night_bisect(night: dict[str, Any], trend_exit: int, **env: str) -> int:
    """config/nightly/bisect.sh's night_bisect, run by sh as nightly.sh runs it."""
    script = (
        f'. "{NIGHTLY / "bisect.sh"}"; night_bisect "$PY" "$OUT" "$NIGHTS" "$CONFIG" {trend_exit}'
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("BOOTRIG_BISECT_")},
        "PY": str(REPO / ".venv" / "bin" / "python"),
        "OUT": str(night["out"]),
        "NIGHTS": str(night["nights"]),
        "CONFIG": str(night["config"]),
        **env,
    }
    proc = subprocess.run(
        ["sh", "-c", script], env=env, cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


def bisect_env(night: dict[str, Any]) -> dict[str, str]:
    return {
        "BOOTRIG_BISECT_REPO": str(night["repo"]),
        "BOOTRIG_BISECT_BUILD": "cp {worktree}/board.toml {out}/board.toml",
        "BOOTRIG_BISECT_ARGS": " ".join(["--set", 'sim.profile="{out}/board.toml"', *FAST_ARGS]),
    }


def test_the_answer_lands_beside_the_change_point(night: dict[str, Any]) -> None:
    found = state(night["repo"])
    code = night_bisect(night, 1, **bisect_env(night))
    doc = json.loads((night["out"] / "bisect.json").read_text())
    assert code == 0, (night["out"] / "bisect.log").read_text()
    commits, cp = night["commits"], night["cp"]
    assert doc["good"]["commit"] == commits[0] and doc["bad"]["commit"] == commits[-1]
    assert doc["stage"] == "kernel"  # the change point's
    assert doc["first_bad"] == {"commit": commits[CULPRIT], "subject": HISTORY[CULPRIT - 1][1]}
    assert doc["explains"]["run_id"] == cp["run_id"] and doc["marked"] is True
    assert json.loads((night["out"] / "bisect" / "bisect.json").read_text())["marked"] is True
    assert state(night["repo"]) == found

    with Client(night["settings"]) as client:
        (result,) = client.query('SELECT * FROM "bisect"', night["settings"].database)
        (series,) = result["series"]
        (row,) = [dict(zip(series["columns"], v, strict=True)) for v in series["values"]]
        assert row["time"] == cp["time_ns"]
        assert (row["board"], row["variant"], row["stage"]) == ("ecovec", "optimised", "kernel")
        assert (row["status"], row["commit"]) == ("found", commits[CULPRIT])
        assert row["difference_s"] == pytest.approx(0.030, abs=0.01)
        # The dashboard shows it beside the change point `rig trend --mark` put there.
        (dash,) = [
            d
            for d in load_dashboards(REPO / "config/grafana/dashboards")
            if d["annotations"]["list"]
        ]
        t = cp["time_ns"] // 1_000_000
        rng = TimeRange(t - 3_600_000, t + 3_600_000)
        for chosen, n in (({}, 1), ({"board": ["ecovec"]}, 1), ({"board": ["other"]}, 0)):
            results = run_queries(
                client, night["settings"].database, dash, chosen, rng, ["annotations"]
            )
            by = {r.panel: r for r in results}
            assert all(r.error is None for r in results)
            marks = by["annotation bisect: first bad commit"].series
            rows = [dict(zip(s["columns"], v, strict=True)) for s in marks for v in s["values"]]
            assert len(rows) == n
            slower = by["annotation change points: slower"].series
            beside = [v[0] for s in slower for v in s["values"]]
            assert [r["time"] for r in rows] == [t for t in beside if t == cp["time_ns"]][:n]
            for r in rows:
                assert commits[CULPRIT][:12] in r["text"]
                assert HISTORY[CULPRIT - 1][1] in r["text"]


def test_off_by_default_and_only_on_a_new_regression(night: dict[str, Any]) -> None:
    assert night_bisect(night, 1) == -1  # no BOOTRIG_BISECT_REPO: off
    for trend_exit in (0, 2, 4):
        assert night_bisect(night, trend_exit, **bisect_env(night)) == -1
    assert not (night["out"] / "bisect.json").exists()
    no_build = {k: v for k, v in bisect_env(night).items() if k != "BOOTRIG_BISECT_BUILD"}
    assert night_bisect(night, 1, **no_build) == 2
    assert "BOOTRIG_BISECT_BUILD" in (night["out"] / "bisect.log").read_text()
    with Client(night["settings"]) as client:
        (got,) = client.query('SELECT * FROM "bisect"', night["settings"].database)
    assert not got.get("series")


def test_night_commit_records_the_revision(night: dict[str, Any]) -> None:
    def commit(**env: str) -> str:
        script = f'. "{NIGHTLY / "bisect.sh"}"; night_commit'
        clean = {k: v for k, v in os.environ.items() if not k.startswith("BOOTRIG_BISECT_")}
        out = subprocess.run(
            ["sh", "-c", script], env={**clean, **env}, capture_output=True, text=True, check=True
        )
        return out.stdout.strip()

    assert commit() == ""
    repo = str(night["repo"])
    assert commit(BOOTRIG_BISECT_REPO=repo) == night["commits"][-1]
    assert commit(BOOTRIG_BISECT_REPO=repo, BOOTRIG_BISECT_REV="HEAD~3") == night["commits"][-4]
    assert commit(BOOTRIG_BISECT_REPO=repo, BOOTRIG_BISECT_REV="nosuchrev") == ""


def test_bad_input_is_refused_before_any_boot(night: dict[str, Any]) -> None:
    def bisect(*args: str) -> tuple[int, dict[str, Any]]:
        argv = [
            str(REPO / ".venv" / "bin" / "python"), "-m", "rig", "bisect",
            "--repo", str(night["repo"]), "--build", "cp {worktree}/board.toml {out}/board.toml",
            "--set", 'sim.profile="{out}/board.toml"', "--out", str(night["tmp"] / "b"),
            *FAST_ARGS, "--json", *args,
        ]  # fmt: skip
        proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)
        return proc.returncode, json.loads(proc.stdout)

    trend_json = str(night["out"] / "trend.json")
    nights, config = str(night["nights"]), str(night["config"])
    bare = make_config(night["tmp"], name="bare.toml")  # no [influx]
    c = night["commits"]
    cases = [
        (["--good", c[0], "--bad", c[-1], "--config", config, "--mark"], "give --explain"),
        (["--explain", trend_json, "--nights", nights, "--config", str(bare), "--mark"],
         "has no [influx] table"),
        (["--nights", nights, "--config", config], "give --explain"),
        (["--explain", trend_json, "--nights", nights, "--good", c[0], "--config", config],
         "not --good or --bad"),
        (["--explain", config, "--good", c[0], "--bad", c[-1], "--config", config],
         "not valid JSON"),
        (["--explain", str(night["nights"] / "latest" / "status.json"), "--config", config],
         "key 'new_regressions': missing"),
        (["--explain", trend_json, "--nights", str(night["tmp"]), "--config", config],
         "no night with a commit"),
    ]  # fmt: skip
    for args, message in cases:
        code, doc = bisect(*args)
        assert code == 2 and message in doc["error"], (args, doc)
    assert not list(night["tmp"].glob("b/steps/*/boot-*"))
    # The change point's night and the night before ran the same commit: not the repository's.
    for n in night["nights"].iterdir():
        if not n.is_symlink():
            (n / "status.json").write_text(json.dumps({"commit": c[2]}))
    code, doc = bisect("--explain", trend_json, "--nights", nights, "--config", config)
    assert code == 2 and "the change is not in the repository" in doc["error"]
