"""Run a dashboard's queries against InfluxDB as Grafana's InfluxDB datasource sends them
(`rig grafana query`), with the macros the generated dashboards use expanded as
docs/dashboards.md lists them. Anything else is refused (exit 2): a macro they do not
use is a dashboard from elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rig.errors import InputError
from rig.sinks.influx.client import Client, InfluxError

KINDS = ("variables", "panels", "annotations")
DEFAULT_MAX_DATA_POINTS = 100  # a panel without maxDataPoints gets its width in px

_REF = re.compile(r"\$(\w+)")
# Grafana's rangeutil.roundInterval: (upper bound exclusive, interval), in ms.
_STEPS = (
    (15, 10), (35, 20), (75, 50), (150, 100), (350, 200), (750, 500), (1_500, 1_000),
    (3_500, 2_000), (7_500, 5_000), (12_500, 10_000), (17_500, 15_000), (25_000, 20_000),
    (45_000, 30_000), (90_000, 60_000), (210_000, 120_000), (450_000, 300_000),
    (750_000, 600_000), (1_050_000, 900_000), (1_500_000, 1_200_000),
    (2_700_000, 1_800_000), (5_400_000, 3_600_000), (9_000_000, 7_200_000),
    (16_200_000, 10_800_000), (32_400_000, 21_600_000), (86_400_000, 43_200_000),
    (604_800_000, 86_400_000), (1_814_400_000, 604_800_000),
    (3_628_800_000, 2_592_000_000),
)  # fmt: skip


@dataclass(frozen=True)
class TimeRange:
    """The dashboard's time range, epoch ms."""

    start_ms: int
    end_ms: int

    @property
    def span_ms(self) -> int:
        return self.end_ms - self.start_ms


@dataclass
class QueryResult:
    dashboard: str
    panel: str  # panel title, "variable <name>" or "annotation <name>"
    ref_id: str
    query: str  # as sent, expanded
    series: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    alias: str = ""  # the target's legend pattern, e.g. "$tag_stage"


def interval_ms(span_ms: int, max_data_points: int) -> int:
    """Grafana's calculateInterval: range / points, rounded to its steps."""
    ms = span_ms / max(1, max_data_points)
    return next((step for bound, step in _STEPS if ms < bound), 31_536_000_000)


def hms(ms: int) -> str:
    """Grafana's secondsToHms: the largest whole unit."""
    for size, unit in ((31_536_000_000, "y"), (86_400_000, "d"), (3_600_000, "h"),
                       (60_000, "m"), (1_000, "s")):  # fmt: skip
        if ms >= size:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def escape_regex(value: str) -> str:
    """@grafana/data escapeRegex (the slash too: the regex is delimited by slashes)."""
    return re.sub(r"[\\^$*+?.()|\[\]{}/]", lambda m: "\\" + m.group(0), value)


def panels(dashboard: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, rows' collapsed panels included."""
    for p in dashboard.get("panels", []):
        yield p
        yield from p.get("panels", [])


def variable_values(
    dashboard: Mapping[str, Any], chosen: Mapping[str, Sequence[str]]
) -> dict[str, str]:
    """Each variable as the datasource puts it in a query; one not chosen is "All"."""
    out: dict[str, str] = {}
    for v in dashboard.get("templating", {}).get("list", []):
        name = v["name"]
        if not (v.get("multi") or v.get("includeAll")) or v.get("allValue") is None:
            raise InputError(
                f"dashboard {dashboard.get('uid')}: variable {name}: only multi-value "
                "variables with a custom all value are expanded"
            )
        values = list(chosen.get(name, ()))
        if not values:
            out[name] = v["allValue"]  # Grafana does not format a custom all value
        elif len(values) == 1:
            out[name] = values[0] if _is_number(values[0]) else escape_regex(values[0])
        else:
            out[name] = "(" + "|".join(map(escape_regex, values)) + ")"
    return out


def _is_number(value: str) -> bool:
    """The datasource leaves a single number unescaped."""
    try:
        float(value)
    except ValueError:
        return False
    return True


def expand(query: str, values: Mapping[str, str], rng: TimeRange, interval: int) -> str:
    """The query as Grafana sends it to InfluxDB; `interval` in ms (`interval_ms`)."""
    builtins = {
        "timeFilter": f"time >= {rng.start_ms}ms and time <= {rng.end_ms}ms",
        "__interval": hms(interval),
    }

    def replace(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in builtins:
            return builtins[name]
        if name in values:
            return values[name]
        raise InputError(f"query refers to ${name}, which is not expanded here: {query}")

    return _REF.sub(replace, query)


def queries(
    dashboard: Mapping[str, Any],
    chosen: Mapping[str, Sequence[str]],
    rng: TimeRange,
    kinds: Sequence[str] = KINDS,
) -> Iterator[QueryResult]:
    """Every query of `kinds` (variables, panels, annotations) of a dashboard, expanded
    with the `chosen` variable values, not yet run."""
    values = variable_values(dashboard, chosen)
    uid = dashboard["uid"]
    if "variables" in kinds:
        for v in dashboard.get("templating", {}).get("list", []):
            yield QueryResult(uid, f"variable {v['name']}", "", expand(v["query"], values, rng, 1))
    if "panels" in kinds:
        for p in panels(dashboard):
            points = int(p.get("maxDataPoints") or DEFAULT_MAX_DATA_POINTS)
            interval = interval_ms(rng.span_ms, points)
            for t in p.get("targets", []):
                query = expand(t["query"], values, rng, interval)
                yield QueryResult(uid, p["title"], t["refId"], query, alias=t.get("alias") or "")
    if "annotations" in kinds:
        # Grafana's built-in annotation (deploys, alerts) has no query: skipped.
        for a in dashboard.get("annotations", {}).get("list", []):
            if a.get("query"):
                interval = interval_ms(rng.span_ms, DEFAULT_MAX_DATA_POINTS)
                query = expand(a["query"], values, rng, interval)
                yield QueryResult(uid, f"annotation {a['name']}", "", query)


def run_queries(
    client: Client,
    database: str,
    dashboard: Mapping[str, Any],
    chosen: Mapping[str, Sequence[str]],
    rng: TimeRange,
    kinds: Sequence[str] = KINDS,
) -> list[QueryResult]:
    """Run the dashboard's queries of `kinds`; InfluxDB's refusal is the result's error."""
    out = list(queries(dashboard, chosen, rng, kinds))
    for res in out:
        try:
            answer = client.query(res.query, database)
            res.series = answer[0].get("series", []) if answer else []
        except InfluxError as e:
            res.error = str(e)
    return out
