"""What every panel shares: the provisioned datasource, the variables' filter, and the
panel pieces more than one panel uses."""

from __future__ import annotations

from grafana_foundation_sdk.models import dashboard as dm

from rig.sinks.grafana.influx import PLUGIN_ID, Built, InfluxQuery, ResultFormat

#: Must match config/grafana/provisioning/datasources/bootrig.yaml (a test checks it).
DATASOURCE_UID = "bootrig-influxdb"


def datasource() -> dm.DataSourceRef:
    return dm.DataSourceRef(type_val=PLUGIN_ID, uid=DATASOURCE_UID)


#: The dashboard variables, in the order they narrow each other. `place`: the labgrid
#: place (boards of one kind in a lab share board and variant).
VARIABLES = ("rig", "board", "variant", "place")

#: Every panel query filters on the variables. Regex match rather than `=`, so a
#: multi-value selection `(a|b)` and "All" (`.*`, which also matches a missing tag such
#: as a boot without a variant, or off any labgrid place) work alike.
SELECTION = " AND ".join(f'"{v}" =~ /^${v}$/' for v in VARIABLES)

#: The selection of what is per board, not per place: change points (`rig trend` finds
#: them in a board's and variant's history, whichever places it booted on).
BOARD_SELECTION = " AND ".join(f'"{v}" =~ /^${v}$/' for v in VARIABLES if v != "place")

#: Every panel asks for at most 100 points, so `$__interval` is the range / 100 whatever
#: the panel's width (what the query tests assume).
MAX_DATA_POINTS = 100


def target(ref: str, query: str, alias: str = "", table: bool = False) -> Built[InfluxQuery]:
    """A raw InfluxQL target; `table`: rows and columns as InfluxDB returns them."""
    fmt: ResultFormat = "table" if table else "time_series"
    return Built(
        InfluxQuery(ref, query, result_format=fmt, alias=alias or None, datasource=datasource())
    )


def grid(h: int, w: int, x: int, y: int) -> dm.GridPos:
    return dm.GridPos(h=h, w=w, x=x, y=y)


def unit_is(unit: str) -> list[dm.DynamicConfigValue]:
    return [dm.DynamicConfigValue(id_val="unit", value=unit)]


def fixed_color(color: str) -> dm.DynamicConfigValue:
    return dm.DynamicConfigValue(id_val="color", value={"mode": "fixed", "fixedColor": color})
