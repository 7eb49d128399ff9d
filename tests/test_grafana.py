"""Dashboards as code: the committed JSON is what the code generates, ids are unique,
every datasource a dashboard uses is provisioned, and the macro expander follows
Grafana's InfluxDB rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from rig.commands.grafana import grafana
from rig.sinks.grafana.budgets import DEFAULT_BUDGETS, BudgetError, load_budgets
from rig.sinks.grafana.generate import build, load_dashboards
from rig.sinks.grafana.macros import (
    ExpandError,
    TimeRange,
    Variable,
    expand,
    hms,
    interval_ms,
)
from rig.sinks.grafana.run import panels

REPO = Path(__file__).resolve().parents[1]
GRAFANA = REPO / "config" / "grafana"
DASHBOARDS = GRAFANA / "dashboards"


def dashboards() -> list[dict[str, Any]]:
    return load_dashboards(DASHBOARDS)


def test_committed_json_is_current(tmp_path: Path) -> None:
    res = build(DASHBOARDS, REPO / "config" / "budgets.toml", check=True)
    assert res.current, f"stale dashboards {res.stale + res.extra}: run `rig grafana build`"
    # and the command says the same, and writes the same bytes elsewhere
    out = CliRunner().invoke(
        grafana, ["build", "--dashboards", str(tmp_path), "--budgets",
                  str(REPO / "config" / "budgets.toml"), "--json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    for p in DASHBOARDS.glob("*.json"):
        assert (tmp_path / p.name).read_bytes() == p.read_bytes()


def test_check_reports_stale_files(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text("{}")
    args = ["build", "--dashboards", str(tmp_path), "--budgets", str(tmp_path / "none.toml")]
    out = CliRunner().invoke(grafana, [*args, "--check", "--json"])
    assert out.exit_code == 1
    res = json.loads(out.output)
    assert res["extra"] == ["old.json"] and len(res["stale"]) == 2
    assert CliRunner().invoke(grafana, args).exit_code == 0
    assert not (tmp_path / "old.json").exists()
    assert CliRunner().invoke(grafana, [*args, "--check"]).exit_code == 0


def test_ids_unique() -> None:
    dashes = dashboards()
    assert len(dashes) == 2
    uids = [d["uid"] for d in dashes]
    assert len(set(uids)) == len(uids)
    titles = [d["title"] for d in dashes]
    assert len(set(titles)) == len(titles)
    for d in dashes:
        ids = [p["id"] for p in panels(d)]
        assert all(isinstance(i, int) for i in ids) and len(set(ids)) == len(ids)
        for p in panels(d):
            refs = [t["refId"] for t in p["targets"]]
            assert refs and len(set(refs)) == len(refs), p["title"]
        names = [v["name"] for v in d["templating"]["list"]]
        assert names == ["rig", "board", "variant", "place"]


def _uids(obj: Any) -> list[str]:
    """Every datasource uid referenced anywhere in a dashboard."""
    found: list[str] = []
    if isinstance(obj, dict):
        ds = obj.get("datasource")
        if isinstance(ds, dict) and "uid" in ds:
            found.append(ds["uid"])
        elif isinstance(ds, str) and ds:
            found.append(ds)  # a legacy name reference must not slip in either
        for v in obj.values():
            found += _uids(v)
    elif isinstance(obj, list):
        for v in obj:
            found += _uids(v)
    return found


def test_every_datasource_is_provisioned() -> None:
    prov = yaml.safe_load((GRAFANA / "provisioning/datasources/bootrig.yaml").read_text())
    provisioned = {ds["uid"]: ds for ds in prov["datasources"]}
    for d in dashboards():
        used = _uids(d)
        assert used and set(used) <= set(provisioned), d["uid"]
    ds = provisioned["bootrig-influxdb"]
    assert ds["type"] == "influxdb" and ds["url"] == "http://127.0.0.1:18086"
    assert ds["jsonData"]["dbName"] == "bootrig" and ds["jsonData"]["version"] == "InfluxQL"
    # credentials only as environment references, never literal
    assert ds["secureJsonData"]["password"].startswith("$")
    assert ds["user"].startswith("$")


def test_dashboard_provider_points_at_the_generated_folder() -> None:
    prov = yaml.safe_load((GRAFANA / "provisioning/dashboards/bootrig.yaml").read_text())
    (provider,) = prov["providers"]
    assert provider["type"] == "file"
    assert provider["options"]["path"] == "$BOOTRIG_GRAFANA_DASHBOARDS"  # no machine paths


def test_budgets_file(tmp_path: Path) -> None:
    assert load_budgets(tmp_path / "missing.toml") == dict(sorted(DEFAULT_BUDGETS.items()))
    f = tmp_path / "budgets.toml"
    f.write_text(
        '[boards.ecovec]\npower_to_ui_s = 0.9\nrobot_only = "x"\n'
        "[boards.ecovec.stages]\nkernel = 0.2\n[boards.other.stages]\ninit = 1\n"
    )
    b = load_budgets(f)
    assert b["ecovec"].power_to_ui_s == 0.9 and b["ecovec"].stages == {"kernel": 0.2}
    assert b["other"].power_to_ui_s is None and b["other"].stages == {"init": 1.0}
    f.write_text("[boards.ecovec]\npower_to_ui_s = -1\n")
    with pytest.raises(BudgetError, match=r"boards\.ecovec\.power_to_ui_s"):
        load_budgets(f)
    # a board without a total budget gets no budget line
    f.write_text("[boards.b.stages]\nkernel = 0.2\n")
    out = CliRunner().invoke(
        grafana, ["build", "--dashboards", str(tmp_path / "d"), "--budgets", str(f)]
    )
    assert out.exit_code == 0
    text = (tmp_path / "d" / "bootrig-boot-time.json").read_text()
    assert 'AS \\"budget\\"' not in text


RANGE = TimeRange(1_714_543_200_000, 1_714_554_000_000)  # 3 h


def test_time_and_interval_macros() -> None:
    assert interval_ms(RANGE.span_ms, 100) == 120_000
    assert [hms(ms) for ms in (10, 1_000, 120_000, 86_400_000, 604_800_000)] == [
        "10ms", "1s", "2m", "1d", "7d",
    ]  # fmt: skip
    q = "SELECT mean(x) FROM m WHERE $timeFilter GROUP BY time($__interval) LIMIT $__interval_ms"
    assert expand(q, {}, RANGE, 120_000) == (
        "SELECT mean(x) FROM m WHERE time >= 1714543200000ms and time <= 1714554000000ms "
        "GROUP BY time(2m) LIMIT 120000"
    )
    rel = TimeRange("now-7d", "now", now_ms=10**12)
    assert expand("$timeFilter [[interval]] ${__range}", {}, rel, 5_000) == (
        "time >= now() - 7d and time <= now() 5s 7d"
    )
    assert interval_ms(rel.span_ms, 100, min_interval_ms=86_400_000) == 86_400_000


def test_variable_formats() -> None:
    q = '"board" =~ /^$board$/'
    many = Variable(values=("eco/vec", "a.b|c"))
    assert expand(q, {"board": many}, RANGE, 1) == '"board" =~ /^(eco\\/vec|a\\.b\\|c)$/'
    one = Variable(values=("a.b",))
    assert expand(q, {"board": one}, RANGE, 1) == '"board" =~ /^a\\.b$/'
    every = Variable(is_all=True, all_value=".*")
    assert expand(q, {"board": every}, RANGE, 1) == '"board" =~ /^.*$/'
    listed = Variable(is_all=True, options=("x", "y"))
    assert expand("${board}", {"board": listed}, RANGE, 1) == "(x|y)"
    plain = Variable(values=("a.b",), multi=False, include_all=False)
    assert expand("\"board\" = '$board'", {"board": plain}, RANGE, 1) == "\"board\" = 'a.b'"
    assert expand(q, {"board": plain}, RANGE, 1) == '"board" =~ /^a\\.b$/'
    assert expand("$n", {"n": Variable(values=("1.5",))}, RANGE, 1) == "1.5"
    assert expand("${b:csv} [[b:pipe]] ${b:singlequote}", {"b": many}, RANGE, 1) == (
        "eco/vec,a.b|c eco/vec|a.b|c 'eco/vec','a.b|c'"
    )
    with pytest.raises(ExpandError, match="unknown variable"):
        expand("$nope", {}, RANGE, 1)
    with pytest.raises(ExpandError, match="format"):
        expand("${b:lucene}", {"b": many}, RANGE, 1)
