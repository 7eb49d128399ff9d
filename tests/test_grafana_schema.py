"""Every committed dashboard reads back through grafana-foundation-sdk's typed models (the
SDK's schema: decode, encode back, the same JSON), every part by a typed model, and a
dashboard with a key the schema does not know, or missing one it requires, does not."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from grafana_foundation_sdk.cog import plugins
from grafana_foundation_sdk.cog import runtime as cogruntime
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as sdk
from grafana_foundation_sdk.models import piechart, table, timeseries

from rig.sinks.grafana.generate import load_dashboards
from rig.sinks.grafana.influx import PLUGIN_ID, InfluxAnnotation, InfluxQuery

REPO = Path(__file__).resolve().parents[1]
DASHBOARDS = load_dashboards(REPO / "config" / "grafana" / "dashboards")
BOOT = next(d for d in DASHBOARDS if d["uid"] == "bootrig-boot-time")


def _query(data: dict[str, Any]) -> InfluxQuery:
    ds = data.get("datasource")
    return InfluxQuery(
        ref_id=data.get("refId", ""),
        query=data.get("query", ""),
        raw_query=data.get("rawQuery", True),
        result_format=data.get("resultFormat", "time_series"),
        alias=data.get("alias"),
        datasource=sdk.DataSourceRef.from_json(ds) if isinstance(ds, dict) else ds,
        hide=data.get("hide"),
    )


def _annotation(data: dict[str, Any]) -> InfluxAnnotation:
    # The target is derived from the legacy fields when encoded: read back without it,
    # so a target that does not match them does not round-trip.
    data = {k: v for k, v in data.items() if k != "target"}
    base = sdk.AnnotationQuery.from_json(data)
    return InfluxAnnotation(query=data.get("query", ""), text_column=data.get("textColumn"),
                            tags_column=data.get("tagsColumn"), **vars(base))  # fmt: skip


def decode(data: dict[str, Any]) -> sdk.Dashboard:
    """The dashboard as the SDK's models; InfluxDB targets and annotations as the rig's."""
    # The SDK's decoders find panel and query models through a registry it leaves empty.
    plugins.register_default_plugins()
    cogruntime.register_dataquery_variant(
        cogruntime.DataqueryConfig(identifier=PLUGIN_ID, from_json_hook=_query)
    )
    dash = sdk.Dashboard.from_json(data)
    raw = data.get("annotations", {}).get("list", [])
    annotations = dash.annotations.list_val or []
    for i, a in enumerate(annotations):
        if a.datasource.type_val == PLUGIN_ID:
            annotations[i] = _annotation(raw[i])
    return dash


def round_trip(data: dict[str, Any]) -> Any:
    return json.loads(json.dumps(decode(data), cls=JSONEncoder))


@pytest.mark.parametrize("dash", DASHBOARDS, ids=lambda d: d["uid"])
def test_committed_dashboards_read_back_through_the_sdk(dash: dict[str, Any]) -> None:
    assert round_trip(dash) == dash


def test_every_part_is_decoded_by_a_typed_model() -> None:
    """The round trip is only as strong as the models behind it: no part is left an
    untyped bag (a panel's options, its targets, the annotations)."""
    models = {"timeseries": timeseries.Options, "table": table.Options,
              "piechart": piechart.Options}  # fmt: skip
    for data in DASHBOARDS:
        dash = decode(data)
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


BROKEN = {
    "unknown panel key": lambda d: d["panels"][0].update(colour="red"),
    "unknown target key": lambda d: d["panels"][0]["targets"][0].update(measurement="boot"),
    "annotation without its colour": lambda d: d["annotations"]["list"][0].pop("iconColor"),
    "annotation target not its query":
        lambda d: d["annotations"]["list"][0]["target"].update(query="SELECT 1"),
    "variable without its type": lambda d: d["templating"]["list"][0].pop("type"),
}  # fmt: skip


@pytest.mark.parametrize("edit", BROKEN.values(), ids=BROKEN.keys())
def test_a_dashboard_off_the_schema_does_not_read_back(edit: Any) -> None:
    dash = copy.deepcopy(BOOT)
    edit(dash)
    assert round_trip(dash) != dash
