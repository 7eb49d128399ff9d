"""Panels of the soak and kernel dashboard: outcomes by class, slowest initcalls,
advisories. One function per panel; each owns its query."""

from __future__ import annotations

from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import piechart, table, timeseries
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models import piechart as pm

from rig.outcomes import Outcome
from rig.sinks.grafana.common import SELECTION, fixed_color, target
from rig.sinks.grafana.panels_boot import MERGED, framed, stacked_bars, stats_table

# `stages_reached_count` is on every boot point, whatever the outcome (a failed boot
# has no power_to_ui_s), so counting it counts boots.
BOOTS = 'count("stages_reached_count")'


def ok_green() -> list[dm.DynamicConfigValue]:
    return [fixed_color("green")]


def outcomes_over_time(grid: dm.GridPos) -> timeseries.Panel:
    return stacked_bars(
        "Soak outcomes over time",
        "Boots per interval by outcome class (ok, hang_in_<stage>, panic, ...).",
        f'SELECT {BOOTS} AS "boots" FROM "boot" WHERE {SELECTION} AND $timeFilter '
        'GROUP BY time($__interval), "outcome" fill(none)',
        "$tag_outcome",
        grid,
        "sum",
    ).override_by_name(Outcome.OK.value, ok_green())


def outcomes_by_class(grid: dm.GridPos) -> piechart.Panel:
    legend = (
        piechart.PieChartLegendOptions()
        .show_legend(True)
        .display_mode(cm.LegendDisplayMode.TABLE)
        .placement(cm.LegendPlacement.RIGHT)
        .values([pm.PieChartLegendValues.VALUE, pm.PieChartLegendValues.PERCENT])
    )
    return (
        framed(piechart.Panel(), "Outcomes by class", "Boots in the time range by outcome.", grid)
        .with_target(
            target(
                "A",
                f'SELECT {BOOTS} AS "boots" FROM "boot" WHERE {SELECTION} AND $timeFilter '
                'GROUP BY "outcome"',
                alias="$tag_outcome",
            )
        )
        .pie_type(pm.PieChartType.DONUT)
        .reduce_options(cb.ReduceDataOptions().values(False).fields("").calcs(["sum"]))
        .legend(legend)
        # Grafana's default, written out: the SDK's pie chart field config has no other
        .hide_from(cb.HideSeriesConfig().legend(False).tooltip(False).viz(False))
        .tooltip(cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.SINGLE).sort(cm.SortOrder.NONE))
        .override_by_name(Outcome.OK.value, ok_green())
    )


def slowest_initcalls(grid: dm.GridPos) -> table.Panel:
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


def advisories(grid: dm.GridPos) -> table.Panel:
    return stats_table(
        "Advisories: what could be saved",
        "Known offenders flagged by the analysis, with the mean estimated gain.",
        'SELECT mean("gain_s") AS "mean_gain", count("gain_s") AS "boots" '
        f'FROM "advisory" WHERE {SELECTION} AND $timeFilter GROUP BY "rule"',
        grid,
        sort_by="mean_gain",
    )
