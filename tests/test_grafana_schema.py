"""Every committed dashboard against the schema grafana-foundation-sdk carries (its typed
models: decode, encode back, compare, and check each value's declared type), and a
dashboard that breaks the schema is refused, by the check and by `rig grafana build`."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from grafana_foundation_sdk.models import piechart, table, timeseries

from rig.commands.grafana import grafana
from rig.sinks.grafana import dashboards, schema
from rig.sinks.grafana.generate import load_dashboards
from rig.sinks.grafana.influx import InfluxAnnotation, InfluxQuery

REPO = Path(__file__).resolve().parents[1]
DASHBOARDS = load_dashboards(REPO / "config" / "grafana" / "dashboards")
BOOT = next(d for d in DASHBOARDS if d["uid"] == "bootrig-boot-time")
SOAK = next(d for d in DASHBOARDS if d["uid"] == "bootrig-soak-kernel")


@pytest.mark.parametrize("dash", DASHBOARDS, ids=lambda d: d["uid"])
def test_committed_dashboards_conform(dash: dict[str, Any]) -> None:
    assert schema.problems(dash) == []


def test_every_part_is_decoded_by_a_typed_model() -> None:
    """The check is only as strong as the models behind it: no part is left an untyped
    bag (a panel's options, its targets, the annotations)."""
    models = {"timeseries": timeseries.Options, "table": table.Options,
              "piechart": piechart.Options}  # fmt: skip
    for data in DASHBOARDS:
        dash = schema.decode(data)
        for p in dash.panels or []:
            assert isinstance(p.options, models[p.type_val]), p.title
            assert p.targets and all(isinstance(t, InfluxQuery) for t in p.targets)
        for a in dash.annotations.list_val or []:
            assert isinstance(a, InfluxAnnotation) and a.query


def test_annotations_carry_the_target_grafana_migrates_them_to() -> None:
    """Grafana up to 8 reads an InfluxDB annotation's top-level query and columns; later
    versions read its `target`, and the newest build that target from the top-level
    fields only when a target is already there. Each annotation therefore carries both,
    the target exactly as Grafana's `migrateLegacyAnnotation` makes it."""
    for data in DASHBOARDS:
        for a in data.get("annotations", {}).get("list", []):
            assert a["target"] == {
                "refId": "", "query": a["query"], "queryType": "tags",
                "fromAnnotations": True, "tagsColumn": a.get("tagsColumn", ""),
                "textColumn": a.get("textColumn", ""), "timeEndColumn": "",
                "titleColumn": "", "name": a["name"],
            }, a["name"]  # fmt: skip


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        for key in path[:-1]:
            d = d[key]
        d[path[-1]] = value

    return edit


def _drop(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        for key in path[:-1]:
            d = d[key]
        del d[path[-1]]

    return edit


# (what is broken, how, the path the check must name)
BROKEN = [
    ("unknown panel key", _set(["panels", 0, "colour"], "red"), "$.panels[0].colour"),
    ("grid width a string", _set(["panels", 0, "gridPos", "w"], "wide"), "grid_pos.w"),
    ("draw style not in the enum",
     _set(["panels", 0, "fieldConfig", "defaults", "custom", "drawStyle"], "zigzag"),
     "custom.draw_style"),
    ("table header flag a string", _set(["panels", 2, "options", "showHeader"], "yes"),
     "options.show_header"),
    ("legend placement not in the enum",
     _set(["panels", 1, "options", "legend", "placement"], "top"), "legend.placement"),
    ("result format not InfluxDB's", _set(["panels", 0, "targets", 0, "resultFormat"], "csv"),
     "targets[0].result_format"),
    ("a query of a datasource with no model",
     _set(["panels", 0, "datasource"], {"type": "graphite", "uid": "g"}),
     "targets[0]"),
    ("annotation without its colour", _drop(["annotations", "list", 0, "iconColor"]),
     "iconColor: required"),
    ("annotation target not its query",
     _set(["annotations", "list", 0, "target", "query"], "SELECT 1"), "$.annotations"),
    ("variable refresh not in the enum", _set(["templating", "list", 0, "refresh"], 7),
     "list_val[0].refresh"),
    ("panel ids not numbers", _set(["panels", 3, "id"], "four"), "panels[3].id_val"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "edit", "where"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_dashboard_is_refused(
    what: str, edit: Callable[[dict[str, Any]], None], where: str
) -> None:
    dash = copy.deepcopy(BOOT)
    edit(dash)
    found = schema.problems(dash)
    assert any(where in p for p in found), (what, found)
    with pytest.raises(schema.RigError, match=r"bootrig-boot-time\.json: not Grafana's"):
        schema.check(dash, "bootrig-boot-time.json")


def test_a_panel_without_a_type_is_refused() -> None:
    dash = copy.deepcopy(SOAK)
    del dash["panels"][1]["type"]
    assert schema.problems(dash)


def test_build_refuses_a_nonconforming_dashboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dashboards, "SCHEMA_VERSION", "39")  # the schema says an integer
    out = CliRunner().invoke(grafana, ["build", "--dashboards", str(tmp_path), "--json"])
    assert out.exit_code == 3, out.output
    err = json.loads(out.output)
    assert err["kind"] == "rig" and "schema_version: expected int, found '39'" in err["error"]
    assert list(tmp_path.iterdir()) == []  # nothing written
