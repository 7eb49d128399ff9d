"""Panels of the soak and kernel dashboard: outcomes by class, slowest initcalls,
advisories. One function per panel; each owns its query."""

from __future__ import annotations

from grafanalib.core import GridPos, PieChartv2, Table, TimeSeries

from rig.outcomes import Outcome
from rig.sinks.grafana.common import DATASOURCE, SELECTION
from rig.sinks.grafana.panels_boot import MERGED, stacked_bars, stats_table, target

# `stages_reached_count` is on every boot point, whatever the outcome (a failed boot
# has no power_to_ui_s), so counting it counts boots.
BOOTS = 'count("stages_reached_count")'

OK_GREEN = {
    "matcher": {"id": "byName", "options": Outcome.OK.value},
    "properties": [{"id": "color", "value": {"mode": "fixed", "fixedColor": "green"}}],
}


def outcomes_over_time(grid: GridPos) -> TimeSeries:
    return stacked_bars(
        "Soak outcomes over time",
        "Boots per interval by outcome class (ok, hang_in_<stage>, panic, ...).",
        f'SELECT {BOOTS} AS "boots" FROM "boot" WHERE {SELECTION} AND $timeFilter '
        'GROUP BY time($__interval), "outcome" fill(none)',
        "$tag_outcome",
        grid,
        "sum",
        overrides=[OK_GREEN],
    )


def outcomes_by_class(grid: GridPos) -> PieChartv2:
    return PieChartv2(
        title="Outcomes by class",
        description="Boots in the time range by outcome.",
        dataSource=DATASOURCE,
        targets=[
            target(
                "A",
                f'SELECT {BOOTS} AS "boots" FROM "boot" WHERE {SELECTION} AND $timeFilter '
                'GROUP BY "outcome"',
                alias="$tag_outcome",
            )
        ],
        gridPos=grid,
        pieType="donut",
        reduceOptionsCalcs=["sum"],
        legendDisplayMode="table",
        legendPlacement="right",
        legendValues=["value", "percent"],
        overrides=[OK_GREEN],
    )


def slowest_initcalls(grid: GridPos) -> Table:
    return stats_table(
        "Slowest initcalls",
        "The 20 initcalls with the highest p95 duration over the time range.",
        'SELECT top("p95", "initcall", 20) AS "p95", "mean", "max", "boots" FROM '
        '(SELECT percentile("duration_s", 95) AS "p95", mean("duration_s") AS "mean", '
        'max("duration_s") AS "max", count("duration_s") AS "boots" '
        f'FROM "initcall" WHERE {SELECTION} AND $timeFilter GROUP BY "initcall")',
        grid,
        transformations=MERGED[1:],  # one series (top() already ranks): nothing to merge
        sort_by="p95",
    )


def advisories(grid: GridPos) -> Table:
    return stats_table(
        "Advisories: what could be saved",
        "Known offenders flagged by the analysis, with the mean estimated gain.",
        'SELECT mean("gain_s") AS "mean_gain", count("gain_s") AS "boots" '
        f'FROM "advisory" WHERE {SELECTION} AND $timeFilter GROUP BY "rule"',
        grid,
        sort_by="mean_gain",
    )
