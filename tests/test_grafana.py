"""Dashboards as code: the committed JSON is what the code generates, ids are unique,
every datasource a dashboard uses is provisioned, and `rig grafana query` expands the
macros the dashboards use by Grafana's InfluxDB rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from rig.commands.grafana import grafana
from rig.errors import InputError
from rig.sinks.grafana.generate import build, load_dashboards
from rig.sinks.grafana.query import TimeRange, expand, hms, interval_ms, panels, variable_values

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
    budgets = tmp_path / "budgets.toml"
    budgets.write_text("[boards.b]\npower_to_ui_s = 1\n")
    args = ["build", "--dashboards", str(tmp_path), "--budgets", str(budgets)]
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


def budget_targets(out: Path) -> list[tuple[str, str]]:
    """(alias, query) of the boot-time dashboard's budget lines in `out`."""
    dash = json.loads((out / "bootrig-boot-time.json").read_text())
    trend = next(p for p in panels(dash) if p["title"].startswith("Power-to-UI per boot"))
    return [(t["alias"], t["query"]) for t in trend["targets"] if 'AS "budget"' in t["query"]]


def test_budget_lines_per_board_and_variant(tmp_path: Path) -> None:
    f = tmp_path / "budgets.toml"
    f.write_text(
        "[boards.a]\npower_to_ui_s = 0.9\n[boards.a.stages]\nkernel = 0.2\n"
        "[boards.a.variants.slow]\npower_to_ui_s = 20\n"
        "[boards.a.variants.trimmed.stages]\nkernel = 0.1\n"  # its total is a's
        "[boards.b.stages]\ninit = 1\n"  # no total: no line
        "[boards.c.variants.v]\npower_to_ui_s = 2.5\n"  # only the variant has one
    )
    args = ["build", "--dashboards", str(tmp_path / "d"), "--budgets", str(f)]
    assert CliRunner().invoke(grafana, args).exit_code == 0
    lines = budget_targets(tmp_path / "d")
    assert [a for a, _ in lines] == [
        "budget a slow", "budget a trimmed", "budget a", "budget c v",
    ]  # fmt: skip
    (_, slow), (_, trimmed), (_, rest), (_, cv) = lines
    assert "+ 20.0 AS" in slow and "\"variant\" = 'slow'" in slow
    assert "+ 0.9 AS" in trimmed and "\"variant\" = 'trimmed'" in trimmed
    # the board's line is for the variants the file does not name (and boots without one)
    assert "+ 0.9 AS" in rest and "\"variant\" != 'slow' AND \"variant\" != 'trimmed'" in rest
    assert "+ 2.5 AS" in cv and "\"board\" = 'c' AND \"variant\" = 'v'" in cv


def test_budgets_file_missing_or_malformed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without --budgets and without config/budgets.toml: no budgets, so no budget lines.
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(grafana, ["build", "--dashboards", "d"])
    assert out.exit_code == 0, out.output
    assert budget_targets(tmp_path / "d") == []
    # A file named on the command line must exist; a bad one names the file and the key.
    f = tmp_path / "budgets.toml"
    out = CliRunner().invoke(grafana, ["build", "--dashboards", "d", "--budgets", str(f), "--json"])
    assert out.exit_code == 2 and "budgets.toml: no such budgets file" in out.output
    f.write_text("[boards.ecovec.variants.baseline]\npower_to_ui_s = -1\n")
    out = CliRunner().invoke(grafana, ["build", "--dashboards", "d", "--budgets", str(f), "--json"])
    assert out.exit_code == 2
    assert "budgets.toml: key 'boards.ecovec.variants.baseline.power_to_ui_s'" in out.output


RANGE = TimeRange(1_714_543_200_000, 1_714_554_000_000)  # 3 h


def test_time_and_interval_macros() -> None:
    assert interval_ms(RANGE.span_ms, 100) == 120_000
    assert interval_ms(7 * 86_400_000, 100) == 7_200_000  # 100.8 min: Grafana's 2 h step
    assert [hms(ms) for ms in (10, 1_000, 120_000, 86_400_000, 604_800_000)] == [
        "10ms", "1s", "2m", "1d", "7d",
    ]  # fmt: skip
    q = "SELECT mean(x) FROM m WHERE $timeFilter GROUP BY time($__interval)"
    assert expand(q, {}, RANGE, 120_000) == (
        "SELECT mean(x) FROM m WHERE time >= 1714543200000ms and time <= 1714554000000ms "
        "GROUP BY time(2m)"
    )
    with pytest.raises(InputError, match=r"\$__interval_ms"):
        expand("LIMIT $__interval_ms", {}, RANGE, 1)


def _variables(**var: Any) -> dict[str, Any]:
    return {"uid": "d", "templating": {"list": [
        {"name": "board", "multi": True, "includeAll": True, "allValue": ".*", **var}
    ]}}  # fmt: skip


def test_variables_by_the_influxdb_rule() -> None:
    q = '"board" =~ /^$board$/'
    dash = _variables()

    def board(*values: str) -> str:
        return expand(q, variable_values(dash, {"board": list(values)}), RANGE, 1)

    assert board("eco/vec", "a.b|c") == '"board" =~ /^(eco\\/vec|a\\.b\\|c)$/'
    assert board("a.b") == '"board" =~ /^a\\.b$/'
    assert board("1.5") == '"board" =~ /^1.5$/'  # a number as it is
    assert board() == '"board" =~ /^.*$/'  # All: the custom all value, unformatted
    with pytest.raises(InputError, match=r"\$unknown, which is not expanded"):
        expand("$unknown", {}, RANGE, 1)
    # Only the variables the generated dashboards have: multi-value, All a custom value.
    for odd in (_variables(multi=False, includeAll=False), _variables(allValue=None)):
        with pytest.raises(InputError, match="variable board: only multi-value"):
            variable_values(odd, {})
