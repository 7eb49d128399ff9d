"""`influx:` sources of `rig compare` (docs/compare.md): the boots InfluxDB holds for some
tags and a time range, stage points joined to their boot by time (the power-on time).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rig.compare.inputs import Boot, Source, split
from rig.config.influx import InfluxSettings, load_influx_config
from rig.errors import InputError
from rig.names import TOTAL
from rig.sinks.influx import influxql
from rig.sinks.influx.client import Client
from rig.sinks.influx.points import BOOT, STAGE

TAGS = ("board", "variant", "rig", "place")
TIMES = ("since", "until")
_DURATION = re.compile(r"^\d+(ns|u|ms|s|m|h|d|w)$")


def is_duration(text: str) -> bool:
    """An InfluxQL duration literal (`12h`, `30d`): what `since`/`until` put in a query."""
    return bool(_DURATION.match(text))


def parse_selector(spec: str) -> dict[str, str]:
    body = spec.partition(":")[2]
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in body.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not value:
            raise InputError(f"{spec}: {part!r}: expected key=value")
        if key not in TAGS + TIMES:
            raise InputError(f"{spec}: unknown key {key!r}: expected {', '.join(TAGS + TIMES)}")
        if key in TIMES and not is_duration(value):
            raise InputError(f"{spec}: {key}={value!r}: expected a duration such as 12h or 7d")
        out[key] = value.strip()
    if not any(k in out for k in TAGS):
        raise InputError(f"{spec}: name at least one of {', '.join(TAGS)} (e.g. board=ecovec)")
    return out


def where(selector: dict[str, str]) -> str:
    clauses = [
        f"{influxql.ident(k)} = {influxql.string(selector[k])}" for k in TAGS if k in selector
    ]
    if "since" in selector:
        clauses.append(f"time > now() - {selector['since']}")
    if "until" in selector:
        clauses.append(f"time <= now() - {selector['until']}")
    return " AND ".join(clauses)


def rows(results: list[dict[str, Any]]) -> list[tuple[dict[str, str], dict[str, Any]]]:
    """A query's rows as (the series' tags, column -> value)."""
    out = []
    for r in results:
        for s in r.get("series") or []:
            tags = s.get("tags") or {}
            out += [(tags, dict(zip(s["columns"], row, strict=True))) for row in s["values"]]
    return out


#: What `rig compare` and `rig trend` read of a boot's points.
_COLUMNS = {BOOT: '"power_to_ui_s", "run_id", "cold_boot"', STAGE: '"duration_s", "start_s"'}


def read_points(
    client: Client, database: str, measurement: str, cond: str, by: str
) -> list[tuple[dict[str, str], dict[str, Any]]]:
    """The `boot` or `stage` points where `cond`, grouped by the tags `by`, as `rows`."""
    q = f"SELECT {_COLUMNS[measurement]} FROM {influxql.ident(measurement)} WHERE {cond}"
    return rows(client.query(f"{q} GROUP BY {by}", database))


def read_boots(client: Client, database: str, selector: dict[str, str]) -> list[Boot]:
    """The selected boots in time order (time = power-on)."""
    cond = where(selector)
    boots: dict[int, dict[str, Any]] = {}
    for tags, v in read_points(client, database, BOOT, cond, '"outcome"'):
        durations = {TOTAL: float(v["power_to_ui_s"])} if v.get("power_to_ui_s") else {}
        boots[int(v["time"])] = {
            "id": str(v.get("run_id") or v["time"]),
            "outcome": tags.get("outcome") or "unknown",
            "durations": durations,
            "starts": {},
            # false: the report flagged it (docs/cold-boot.md); null: not known
            "not_cold": "flagged" if v.get("cold_boot") is False else None,
        }
    for tags, v in read_points(client, database, STAGE, cond, '"stage"'):
        stage = tags.get("stage")
        boot = boots.get(int(v["time"]))
        if boot is None or stage is None:
            continue  # a stage point whose boot point is outside the selection
        if v.get("duration_s") is not None:
            boot["durations"][stage] = float(v["duration_s"])
        boot["starts"][stage] = v.get("start_s") or 0.0
    out = []
    for _, b in sorted(boots.items()):
        order = tuple(sorted(b["starts"], key=lambda n: b["starts"][n]))
        out.append(Boot(b["id"], "influx", b["outcome"], b["durations"], order, b["not_cold"]))
    return out


def load_query(spec: str, config: Path | None, warmup: int, include_warm: bool = False) -> Source:
    """The `influx:` source `spec`, with the [influx] settings of `config`; boots whose
    point says they were not a true cold boot are excluded unless `include_warm`."""
    selector = parse_selector(spec)
    settings = _settings(spec, config)
    with Client(settings) as client:
        boots = read_boots(client, settings.database, selector)
    if not boots:
        raise InputError(f"{spec}: InfluxDB ({settings.database}) has no boots for this selection")
    source = Source(spec, "influx", f"{settings.url} {settings.database}")
    return split(boots, source, warmup, include_warm)


def _settings(spec: str, config: Path | None) -> InfluxSettings:
    if config is None or not Path(config).is_file():
        raise InputError(f"{spec}: an influx: source needs a rig config with [influx] (--config)")
    settings = load_influx_config(Path(config)).settings
    if settings is None:
        raise InputError(f"{spec}: {config} has no [influx] table to read boots from")
    return settings
