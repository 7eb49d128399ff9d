"""Panels of the boot-time dashboard: trend with budget lines, stage breakdown, per-stage
p50/p95 per variant, latest boots. One function per panel; each owns its query."""

from __future__ import annotations

from grafanalib.core import GridPos, Table, TableSortByField, TimeSeries
from grafanalib.influxdb import InfluxDBTarget

from rig.outcomes import Outcome
from rig.sinks.grafana.budgets import Budget
from rig.sinks.grafana.common import DATASOURCE, SELECTION, ql_string

BUDGET_PREFIX = "budget "


def target(ref: str, query: str, alias: str = "", table: bool = False) -> InfluxDBTarget:
    return InfluxDBTarget(
        query=query,
        rawQuery=True,
        refId=ref,
        alias=alias,
        format="table" if table else "time_series",
        datasource=DATASOURCE,
    )


def stacked_bars(
    title: str, description: str, query: str, alias: str, grid: GridPos, calc: str, **more: object
) -> TimeSeries:
    """Bars per interval, one series per tag value, stacked, with a legend table."""
    return TimeSeries(
        title=title,
        description=description,
        dataSource=DATASOURCE,
        targets=[target("A", query, alias=alias)],
        gridPos=grid,
        drawStyle="bars",
        fillOpacity=80,
        stacking={"mode": "normal", "group": "A"},
        legendDisplayMode="table",
        legendPlacement="right",
        legendCalcs=[calc],
        **more,
    )


#: Grafana's table transformations for one InfluxQL result: merge the series of a
#: GROUP BY into one table, and drop the time column.
MERGED = [
    {"id": "merge", "options": {}},
    {"id": "organize", "options": {"excludeByName": {"Time": True}}},
]


def stats_table(
    title: str,
    description: str,
    query: str,
    grid: GridPos,
    *,
    transformations: list[dict[str, object]] | None = None,
    sort_by: str | None = None,
) -> Table:
    """A table of per-group statistics in seconds, with a `boots` count column."""
    return Table(
        title=title,
        description=description,
        dataSource=DATASOURCE,
        targets=[target("A", query, table=True)],
        gridPos=grid,
        unit="s",
        overrides=[unit_override("boots", "none")],
        transformations=MERGED if transformations is None else transformations,
        sortBy=[TableSortByField(displayName=sort_by, desc=True)] if sort_by else [],
    )


def unit_override(column: str, unit: str) -> dict[str, object]:
    return {
        "matcher": {"id": "byName", "options": column},
        "properties": [{"id": "unit", "value": unit}],
    }


def budget_query(board: str, seconds: float) -> str:
    # InfluxQL has no constant series: the budget rides on the board's own boots
    # (`last(x) * 0 + budget`), filled forward, so it shows only for boards selected.
    return (
        f'SELECT last("power_to_ui_s") * 0 + {seconds!r} AS "budget" FROM "boot" '
        f'WHERE "board" = {ql_string(board)} AND {SELECTION} AND "outcome" = \'ok\' '
        "AND $timeFilter GROUP BY time($__interval) fill(previous)"
    )


def power_to_ui_trend(budgets: dict[str, Budget], grid: GridPos) -> TimeSeries:
    boots = target(
        "A",
        f'SELECT "power_to_ui_s" FROM "boot" WHERE {SELECTION} AND "outcome" = \'ok\' '
        'AND $timeFilter GROUP BY "board", "variant"',
        alias="$tag_board $tag_variant",
    )
    totals = [(board, b.power_to_ui_s) for board, b in budgets.items() if b.power_to_ui_s]
    lines = [
        target(chr(ord("B") + i), budget_query(board, seconds), BUDGET_PREFIX + board)
        for i, (board, seconds) in enumerate(totals)
    ]
    dashed = {
        "matcher": {"id": "byRegexp", "options": f"^{BUDGET_PREFIX}"},
        "properties": [
            {"id": "custom.lineStyle", "value": {"fill": "dash", "dash": [10, 10]}},
            {"id": "custom.showPoints", "value": "never"},
            {"id": "color", "value": {"mode": "fixed", "fixedColor": "red"}},
        ],
    }
    return TimeSeries(
        title="Power-to-UI per boot, with budgets",
        description="Each point is one boot (outcome ok); dashed lines are the board budgets.",
        dataSource=DATASOURCE,
        targets=[boots, *lines],
        gridPos=grid,
        unit="s",
        showPoints="always",
        pointSize=6,
        lineWidth=1,
        overrides=[dashed],
        legendDisplayMode="table",
        legendPlacement="right",
        legendCalcs=["min", "mean", "max"],
    )


def stage_breakdown(grid: GridPos) -> TimeSeries:
    return stacked_bars(
        "Stage breakdown over time",
        "Mean duration of each stage per interval, stacked: the bar height is "
        "the mean power-to-UI.",
        f'SELECT mean("duration_s") FROM "stage" WHERE {SELECTION} '
        f'AND "outcome" = {ql_string(Outcome.OK)} AND $timeFilter '
        'GROUP BY time($__interval), "stage" fill(none)',
        "$tag_stage",
        grid,
        "mean",
        unit="s",
    )


def stage_percentiles(grid: GridPos) -> Table:
    return stats_table(
        "Per-stage p50 / p95 per variant",
        "Over the time range, boots with outcome ok.",
        'SELECT percentile("duration_s", 50) AS "p50", '
        'percentile("duration_s", 95) AS "p95", count("duration_s") AS "boots" '
        f'FROM "stage" WHERE {SELECTION} AND "outcome" = \'ok\' AND $timeFilter '
        'GROUP BY "board", "variant", "stage"',
        grid,
    )


def latest_boots(grid: GridPos) -> Table:
    return Table(
        title="Latest boots",
        description="The 20 most recent boots of the selection, every outcome.",
        dataSource=DATASOURCE,
        targets=[
            target(
                "A",
                'SELECT "run_id", "board", "variant", "outcome", "power_to_ui_s", '
                '"power_to_ui_uncertainty_s", "stages_reached_count", "advisory_gain_s" '
                f'FROM "boot" WHERE {SELECTION} AND $timeFilter ORDER BY time DESC LIMIT 20',
                table=True,
            )
        ],
        gridPos=grid,
        overrides=[
            unit_override("power_to_ui_s", "s"),
            unit_override("power_to_ui_uncertainty_s", "s"),
            unit_override("advisory_gain_s", "s"),
        ],
        sortBy=[TableSortByField(displayName="Time", desc=True)],
    )
