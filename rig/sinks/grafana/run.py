"""Run a dashboard's queries against InfluxDB as Grafana would: every panel target and
every variable query, with the macros and the variables' selection expanded."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rig.sinks.grafana.macros import TimeRange, Variable, expand, interval_ms
from rig.sinks.influx.client import Client, InfluxError

DEFAULT_MAX_DATA_POINTS = 100  # a panel without maxDataPoints gets its width in px


@dataclass
class QueryResult:
    dashboard: str
    panel: str  # panel title, or "variable <name>"
    ref_id: str
    query: str  # as sent, expanded
    series: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    alias: str = ""  # the target's legend pattern, e.g. "$tag_stage"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def panels(dashboard: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, rows' collapsed panels included."""
    for p in dashboard.get("panels", []):
        yield p
        yield from p.get("panels", [])


def selection(
    dashboard: Mapping[str, Any], chosen: Mapping[str, Sequence[str]]
) -> dict[str, Variable]:
    """The dashboard's variables with `chosen` values; a variable not chosen is "All"."""
    out: dict[str, Variable] = {}
    for v in dashboard.get("templating", {}).get("list", []):
        values = tuple(chosen.get(v["name"], ()))
        out[v["name"]] = Variable(
            values=values,
            multi=bool(v.get("multi")),
            include_all=bool(v.get("includeAll")),
            all_value=v.get("allValue") or None,
            is_all=not values,
        )
    return out


def _run(client: Client, database: str, res: QueryResult) -> QueryResult:
    try:
        answer = client.query(res.query, database)
        res.series = answer[0].get("series", []) if answer else []
    except InfluxError as e:
        res.error = str(e)
    return res


Vars = dict[str, Variable]

#: One query to run: where it is (panel title, "variable x", "annotation y"), its refId,
#: the expanded InfluxQL and the panel target's alias.
_Query = tuple[str, str, str, str]


def _panel_queries(
    dashboard: Mapping[str, Any], variables: Vars, rng: TimeRange
) -> Iterator[_Query]:
    for p in panels(dashboard):
        points = int(p.get("maxDataPoints") or DEFAULT_MAX_DATA_POINTS)
        interval = interval_ms(rng.span_ms, points)
        for t in p.get("targets", []):
            query = expand(t["query"], variables, rng, interval)
            yield p["title"], t["refId"], query, t.get("alias") or ""


def _variable_queries(
    dashboard: Mapping[str, Any], variables: Vars, rng: TimeRange
) -> Iterator[_Query]:
    for v in dashboard.get("templating", {}).get("list", []):
        # Grafana formats every variable as a regex in variable queries.
        yield f"variable {v['name']}", "", expand(v["query"], variables, rng, 1, fmt="regex"), ""


def _annotation_queries(
    dashboard: Mapping[str, Any], variables: Vars, rng: TimeRange
) -> Iterator[_Query]:
    # Grafana's built-in annotation (deploys, alerts) has no query: skipped.
    for a in dashboard.get("annotations", {}).get("list", []):
        if a.get("query"):
            query = expand(a["query"], variables, rng, interval_ms(rng.span_ms, 100))
            yield f"annotation {a['name']}", "", query, ""


_KINDS = {"panels": _panel_queries, "variables": _variable_queries,
          "annotations": _annotation_queries}  # fmt: skip


def run_queries(
    kind: str,
    client: Client,
    database: str,
    dashboard: Mapping[str, Any],
    chosen: Mapping[str, Sequence[str]],
    rng: TimeRange,
) -> list[QueryResult]:
    """Run every query of `kind` (panels, variables, annotations) of a dashboard with
    the `chosen` variable values, as Grafana would expand it."""
    out: list[QueryResult] = []
    for title, ref, query, alias in _KINDS[kind](dashboard, selection(dashboard, chosen), rng):
        res = QueryResult(dashboard["uid"], title, ref, query)
        res.alias = alias
        out.append(_run(client, database, res))
    return out


run_panels = functools.partial(run_queries, "panels")
run_variables = functools.partial(run_queries, "variables")
run_annotations = functools.partial(run_queries, "annotations")
