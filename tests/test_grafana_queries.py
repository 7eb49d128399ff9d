"""Every dashboard query, with Grafana's macros and variables expanded, run against a
real private InfluxDB seeded with real reports (written by the real sink): each panel
returns the series the seeded boots imply, for several variable selections."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rig.commands.grafana import grafana
from rig.config.budgets import read_budgets
from rig.config.influx import InfluxSettings
from rig.model import Report as ReportModel
from rig.sinks.grafana.generate import load_dashboards
from rig.sinks.grafana.query import QueryResult, TimeRange, interval_ms, panels, run_queries
from rig.sinks.influx.changepoints import Mark
from rig.sinks.influx.client import Client
from rig.sinks.influx.deliver import deliver
from rig.sinks.influx.lineproto import encode_all
from rig.sinks.influx.points import point_time_ns
from rig.sinks.influx.server import private_server
from tests.sample_report import sample_report

REPO = Path(__file__).resolve().parents[1]
DASHBOARDS = load_dashboards(REPO / "config" / "grafana" / "dashboards")
BUDGETS = read_budgets(REPO / "config" / "budgets.toml")
RANGE = TimeRange(1_714_543_200_000 - 3_600_000, 1_714_543_200_000 + 7_200_000)
DB = "grafana"
Report = dict[str, Any]


def time_ns(r: Report) -> int:
    """The boot's point time, as the sink stamps it."""
    return point_time_ns(ReportModel.from_json(r))


def scaled(r: Report, factor: float) -> Report:
    t = 0.0
    for s in r["stages"]:
        d = s["duration_s"] * factor
        s.update(start_s=t, end_s=t + d, duration_s=d)
        t += d
    r["power_to_ui_s"] = t
    return r


def failed(r: Report, outcome: str, reached: int) -> Report:
    """Stages from `reached` on never ended; no power-to-UI; no advisories."""
    for s in r["stages"][reached:]:
        s.update(end_s=None, duration_s=None, uncertainty_s=None, source=None)
        if s is not r["stages"][reached]:
            s["start_s"] = None
    r.update(outcome=outcome, power_to_ui_s=None, power_to_ui_uncertainty_s=None, advisories=[])
    return r


def seed_reports() -> list[Report]:
    rs = [sample_report(i, initcalls=25).to_json() for i in range(12)]
    rs += [
        scaled(sample_report(20 + i, initcalls=25, variant="baseline").to_json(), 25)
        for i in range(6)
    ]
    lab = [
        sample_report(30 + i, 10, board="fastboard", variant="test", rig="lab-2").to_json()
        for i in range(5)
    ]
    for i, r in enumerate(lab):  # a lab's boards of one kind, told apart by place
        r["place"] = f"b{i % 2 + 1}"
    failed(lab[1], "hang_in_rootfs_mount", 2)
    failed(lab[3], "panic", 1)
    rs += lab
    # regex metacharacters in a board name, and boots without a variant
    rs += [
        sample_report(40 + i, 5, board="rev/b+1.0", variant="x", rig="lab-2").to_json()
        for i in range(2)
    ]
    rs += [{**sample_report(50 + i, 5).to_json(), "variant": None} for i in range(3)]
    failed(rs[-1], "console_lost", 0)
    return rs


REPORTS = seed_reports()


def mark(r: Report, stage: str, direction: str) -> Mark:
    shift = 0.02 if direction == "slower" else -0.02
    return Mark(r["board"], r["variant"] or "", stage, r["rig"], direction, time_ns(r),
                r["run_id"], shift, 0.1, 0.1 + shift, 1e-5)  # fmt: skip


# What `rig trend --mark` writes: change points at some boots, every kind of selection.
MARKS = [mark(REPORTS[5], "kernel", "slower"), mark(REPORTS[14], "init", "faster"),
         mark(REPORTS[20], "power_to_ui", "slower"), mark(REPORTS[-4], "kernel", "slower"),
         mark(REPORTS[-2], "bootloader", "faster")]  # fmt: skip


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    tmp = tmp_path_factory.mktemp("grafana-influx")
    with private_server(tmp / "influxd") as srv:
        settings = InfluxSettings(url=srv.url, database=DB)
        for r in REPORTS:
            assert deliver(ReportModel.from_json(r), settings, tmp / "results").status == "written"
        with Client(settings) as c:
            c.write(encode_all(m.point() for m in MARKS))
            yield c


@pytest.fixture(scope="module")
def server_url(client: Client) -> str:
    return client.settings.url


def chosen_reports(chosen: dict[str, list[str]]) -> list[Report]:
    return [r for r in REPORTS if all(r.get(k) in v for k, v in chosen.items())]


def nearest_rank(values: list[float], pct: float) -> float:
    """InfluxDB 1.x percentile(): the value at rank floor(n * p / 100 + 0.5)."""
    v = sorted(values)
    return v[math.floor(len(v) * pct / 100 + 0.5) - 1]


def series_by(res: QueryResult, *tags: str) -> dict[tuple[str, ...], dict[str, Any]]:
    return {tuple(s.get("tags", {}).get(t, "") for t in tags): s for s in res.series}


def column(s: dict[str, Any], name: str) -> list[Any]:
    i = s["columns"].index(name)
    return [row[i] for row in s["values"]]


def bucket_ns(r: Report, step_ms: int) -> int:
    t, step = time_ns(r), step_ms * 1_000_000
    return t - t % step


STEP = interval_ms(RANGE.span_ms, 100)  # every panel sets maxDataPoints 100 (common.py)


# One check per panel title: (the panel's query results, the boots selected) -> asserts.
Check = Callable[[list[QueryResult], list[Report]], None]


def check_trend(results: list[QueryResult], rs: list[Report]) -> None:
    ok = [r for r in rs if r["outcome"] == "ok"]
    boots, *lines = results
    got = series_by(boots, "board", "variant")
    want: dict[tuple[str, ...], list[float]] = defaultdict(list)
    for r in sorted(ok, key=time_ns):
        want[(r["board"], r["variant"] or "")].append(r["power_to_ui_s"])
    assert set(got) == set(want)
    for key, values in want.items():
        assert column(got[key], "power_to_ui_s") == pytest.approx(values, rel=1e-12)
    # A line per variant the file names and one per board, each on the boots it budgets.
    named = {b: set(board.variants) for b, board in BUDGETS.boards.items()}
    alias = {(b, v): f"budget {b}" + (f" {v}" if v else "") for b in named for v in [*named[b], ""]}
    assert sorted(r.alias for r in lines) == sorted(
        a for (b, v), a in alias.items() if BUDGETS.budgets(b, v or None).power_to_ui_s
    )
    drawn: dict[str, list[Report]] = defaultdict(list)
    for r in (r for r in ok if r["board"] in named):
        variant = r["variant"] if r["variant"] in named[r["board"]] else ""
        drawn[alias[r["board"], variant]].append(r)
    for line in lines:
        mine = drawn.get(line.alias, [])
        if not mine:
            assert line.series == []
            continue
        (s,) = line.series
        points = [(t, v) for t, v in s["values"] if v is not None]
        budget = {BUDGETS.budgets(r["board"], r["variant"]).power_to_ui_s for r in mine}
        assert {v for _, v in points} == budget and len(budget) == 1
        assert points[0][0] == min(bucket_ns(r, STEP) for r in mine)


def check_breakdown(results: list[QueryResult], rs: list[Report]) -> None:
    (res,) = results
    want: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rs:
        if r["outcome"] == "ok":
            for s in r["stages"]:
                want[s["name"]][bucket_ns(r, STEP)].append(s["duration_s"])
    got = series_by(res, "stage")
    assert set(got) == {(k,) for k in want}
    for stage, buckets in want.items():
        rows = got[(stage,)]["values"]
        assert [t for t, _ in rows] == sorted(buckets)
        means = [sum(v) / len(v) for _, v in sorted(buckets.items())]
        assert [m for _, m in rows] == pytest.approx(means, rel=1e-9)


def check_percentiles(results: list[QueryResult], rs: list[Report]) -> None:
    (res,) = results
    want: dict[tuple[str, ...], list[float]] = defaultdict(list)
    for r in rs:
        if r["outcome"] == "ok":
            for s in r["stages"]:
                want[(r["board"], r["variant"] or "", s["name"])].append(s["duration_s"])
    got = series_by(res, "board", "variant", "stage")
    assert set(got) == set(want)
    for key, values in want.items():
        (row,) = got[key]["values"]
        _, p50, p95, boots = row
        assert (p50, p95) == pytest.approx((nearest_rank(values, 50), nearest_rank(values, 95)))
        assert boots == len(values)


def check_latest(results: list[QueryResult], rs: list[Report]) -> None:
    (res,) = results
    latest = sorted(rs, key=time_ns, reverse=True)[:20]
    if not latest:
        assert res.series == []
        return
    (s,) = res.series
    assert column(s, "run_id") == [r["run_id"] for r in latest]
    assert column(s, "outcome") == [r["outcome"] for r in latest]
    assert column(s, "variant") == [r["variant"] for r in latest]
    assert column(s, "power_to_ui_s") == pytest.approx([r["power_to_ui_s"] for r in latest])


def check_outcomes_over_time(results: list[QueryResult], rs: list[Report]) -> None:
    (res,) = results
    got = {k[0]: sum(column(s, "boots")) for k, s in series_by(res, "outcome").items()}
    assert got == Counter(r["outcome"] for r in rs)
    for (outcome,), s in series_by(res, "outcome").items():
        want = Counter(bucket_ns(r, STEP) for r in rs if r["outcome"] == outcome)
        assert dict(zip(column(s, "time"), column(s, "boots"), strict=True)) == want


def check_outcomes(results: list[QueryResult], rs: list[Report]) -> None:
    (res,) = results
    got = {k[0]: column(s, "boots")[0] for k, s in series_by(res, "outcome").items()}
    assert got == Counter(r["outcome"] for r in rs)


def check_initcalls(results: list[QueryResult], rs: list[Report]) -> None:
    (res,) = results
    calls: dict[str, list[float]] = defaultdict(list)
    for r in rs:
        for c in r["initcalls"]:
            calls[c["name"]].append(c["duration_s"])
    ranked = sorted(calls, key=lambda n: nearest_rank(calls[n], 95), reverse=True)[:20]
    if not ranked:
        assert res.series == []
        return
    (s,) = res.series
    got = dict(zip(column(s, "initcall"), column(s, "p95"), strict=True))
    assert set(got) == set(ranked)
    for name in ranked:
        assert got[name] == pytest.approx(nearest_rank(calls[name], 95))
    rows = {row[s["columns"].index("initcall")]: row for row in s["values"]}
    for name in ranked:
        row = dict(zip(s["columns"], rows[name], strict=True))
        assert row["boots"] == len(calls[name]) and row["max"] == pytest.approx(max(calls[name]))


def check_advisories(results: list[QueryResult], rs: list[Report]) -> None:
    (res,) = results
    gains: dict[str, list[float]] = defaultdict(list)
    for r in rs:
        for a in r["advisories"]:
            gains[a["rule"]].append(a["gain_s"])
    got = series_by(res, "rule")
    assert set(got) == {(k,) for k in gains}
    for rule, g in gains.items():
        (row,) = got[(rule,)]["values"]
        assert row[1:] == pytest.approx([sum(g) / len(g), len(g)])


CHECKS: dict[str, Check] = {
    "Power-to-UI per boot, with budgets": check_trend,
    "Stage breakdown over time": check_breakdown,
    "Per-stage p50 / p95 per variant": check_percentiles,
    "Latest boots": check_latest,
    "Soak outcomes over time": check_outcomes_over_time,
    "Outcomes by class": check_outcomes,
    "Slowest initcalls": check_initcalls,
    "Advisories: what could be saved": check_advisories,
}

SELECTIONS: list[dict[str, list[str]]] = [
    {},  # All everywhere (includes the boots without a variant)
    {"board": ["ecovec"]},
    {"board": ["ecovec", "fastboard"], "rig": ["sim-rig", "lab-2"]},
    {"variant": ["baseline"]},
    {"rig": ["lab-2"]},
    {"board": ["rev/b+1.0"]},  # regex metacharacters must be escaped, not interpreted
    {"board": ["fastboard"], "variant": ["optimised"]},  # nothing selected
    {"place": ["b1"]},  # one place of the lab; boots off any place are not on it
]


def test_every_panel_has_a_check() -> None:
    titles = [p["title"] for d in DASHBOARDS for p in panels(d)]
    assert sorted(titles) == sorted(CHECKS)


@pytest.mark.parametrize("chosen", SELECTIONS, ids=lambda c: ",".join(map(str, c.items())) or "all")
def test_panels_return_the_expected_series(client: Client, chosen: dict[str, list[str]]) -> None:
    rs = chosen_reports(chosen)
    for dash in DASHBOARDS:
        results = run_queries(client, DB, dash, chosen, RANGE, ["panels"])
        assert [r.error for r in results if r.error] == []
        by_panel: dict[str, list[QueryResult]] = defaultdict(list)
        for r in results:
            assert "$" not in r.query.replace("$/", ""), r.query  # every macro expanded
            by_panel[r.panel].append(r)
        for title, res in by_panel.items():
            CHECKS[title](res, rs)


def test_an_ecovec_baseline_boot_is_drawn_against_its_variant_budget(client: Client) -> None:
    # The first-measured Ecovec (~19.4 s) against its variant's 20.5 s, not the board's 1.0 s
    (dash,) = [d for d in DASHBOARDS if d["uid"] == "bootrig-boot-time"]
    for chosen in ({"board": ["ecovec"], "variant": ["baseline"]}, {"variant": ["baseline"]}):
        results = run_queries(client, DB, dash, chosen, RANGE, ["panels"])
        boots, *lines = [r for r in results if r.panel == "Power-to-UI per boot, with budgets"]
        (s,) = boots.series
        assert min(column(s, "power_to_ui_s")) > 18 and max(column(s, "power_to_ui_s")) < 20.5
        drawn = {(r.alias, v) for r in lines for s in r.series for _, v in s["values"] if v}
        assert drawn == {("budget ecovec baseline", 20.5)}


@pytest.mark.parametrize("chosen", SELECTIONS, ids=lambda c: ",".join(map(str, c.items())) or "all")
def test_change_point_annotations(client: Client, chosen: dict[str, list[str]]) -> None:
    def selected(m: Mark) -> bool:
        tags = {"board": m.board, "variant": m.variant or None, "rig": m.rig}
        # Change points are a board's and variant's, whichever place: not by place.
        return all(tags[k] in v for k, v in chosen.items() if k != "place")

    for dash in DASHBOARDS:
        results = run_queries(client, DB, dash, chosen, RANGE, ["annotations"])
        assert [r.error for r in results if r.error] == []
        if dash["uid"] != "bootrig-boot-time":
            assert results == []
            continue
        assert [r.panel for r in results] == [
            "annotation change points: slower",
            "annotation change points: faster",
            "annotation bisect: first bad commit",
        ]
        assert results[2].series == []  # no bisect here: tests/test_bisect_nightly.py has one
        for res, direction in zip(results[:2], ("slower", "faster"), strict=True):
            rows = [
                dict(zip(s["columns"], v, strict=True)) for s in res.series for v in s["values"]
            ]
            want = [m for m in MARKS if m.direction == direction and selected(m)]
            assert sorted((r["time"], r["stage"], r["run_id"], r["text"]) for r in rows) == sorted(
                (m.time_ns, m.stage, m.run_id, m.text) for m in want
            )
            assert all(r["direction"] == direction for r in rows)


def test_variable_queries(client: Client) -> None:
    def values(res: QueryResult) -> set[str]:
        return {v[1] for s in res.series for v in s["values"]}

    for dash in DASHBOARDS:
        rig, board, variant, place = run_queries(client, DB, dash, {}, RANGE, ["variables"])
        assert values(place) == {"b1", "b2"}
        assert values(rig) == {r["rig"] for r in REPORTS}
        assert values(board) == {r["board"] for r in REPORTS}
        assert values(variant) == {r["variant"] for r in REPORTS if r["variant"]}
        _, board, variant, _ = run_queries(
            client, DB, dash, {"rig": ["lab-2"]}, RANGE, ["variables"]
        )
        assert values(board) == {"fastboard", "rev/b+1.0"}
        chosen = {"rig": ["sim-rig"], "board": ["ecovec"]}
        _, _, variant, place = run_queries(client, DB, dash, chosen, RANGE, ["variables"])
        assert values(variant) == {"optimised", "baseline"} and values(place) == set()


def test_query_command(server_url: str, tmp_path: Path) -> None:
    cfg = tmp_path / "rig.toml"
    cfg.write_text(f'[influx]\nurl = "{server_url}"\ndatabase = "{DB}"\n')
    args = ["query", "--config", str(cfg), "--dashboards",
            str(REPO / "config" / "grafana" / "dashboards"), "--since", "3650d"]  # fmt: skip
    out = CliRunner().invoke(grafana, [*args, "--var", "board=ecovec", "--json"])
    assert out.exit_code == 0, out.output

    results = json.loads(out.output)["results"]
    annotations = sum(1 for d in DASHBOARDS for a in d["annotations"]["list"] if a.get("query"))
    assert annotations == 3
    targets = sum(len(p["targets"]) for d in DASHBOARDS for p in panels(d))
    assert len(results) == 2 * 4 + targets + annotations
    latest = next(r for r in results if r["panel"] == "Latest boots")
    assert {row[2] for row in latest["series"][0]["values"]} == {"ecovec"}
    out = CliRunner().invoke(grafana, args)
    assert out.exit_code == 0 and "Slowest initcalls" in out.output
