"""Panels of the boot-time dashboard: trend with budget lines, stage breakdown, per-stage
p50/p95 per variant, latest boots. One function per panel; each owns its query."""

from __future__ import annotations

from typing import TypeVar

from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import piechart, table, timeseries
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm

from rig.model.budgets import BudgetFile
from rig.outcomes import Outcome
from rig.sinks.grafana.common import (
    MAX_DATA_POINTS,
    SELECTION,
    datasource,
    fixed_color,
    target,
    unit_is,
)
from rig.sinks.grafana.influx import Built, InfluxQuery
from rig.sinks.influx import influxql

BUDGET_PREFIX = "budget "


def _ref(i: int) -> str:
    """Grafana's refIds: A ... Z, then AA, AB ..."""
    return chr(ord("A") + i) if i < 26 else _ref(i // 26 - 1) + chr(ord("A") + i % 26)


Panel = TypeVar("Panel", timeseries.Panel, table.Panel, piechart.Panel)


def framed(panel: Panel, title: str, description: str, grid: dm.GridPos) -> Panel:
    """What every panel shares: its title and place, the datasource, 100 points, the
    base threshold."""
    # No panel colours by value; Grafana's own empty-thresholds form (one green base
    # step), written out so Grafana's plugin default (red at 80) never applies.
    green = [dm.Threshold(value=None, color="green")]
    return (
        panel.title(title)
        .description(description)
        .datasource(datasource())
        .grid_pos(grid)
        .max_data_points(MAX_DATA_POINTS)
        .thresholds(db.ThresholdsConfig().mode(dm.ThresholdsMode.ABSOLUTE).steps(green))
    )


def time_series(
    title: str, description: str, grid: dm.GridPos, legend_calcs: list[str]
) -> timeseries.Panel:
    """What every time series panel shares: a frame, the palette, a legend table."""
    return (
        framed(timeseries.Panel(), title, description, grid)
        .color_scheme(db.FieldColor().mode(dm.FieldColorModeId.PALETTE_CLASSIC))
        .legend(
            cb.VizLegendOptions()
            .show_legend(True)
            .display_mode(cm.LegendDisplayMode.TABLE)
            .placement(cm.LegendPlacement.RIGHT)
            .calcs(legend_calcs)
        )
        .tooltip(cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.SINGLE).sort(cm.SortOrder.NONE))
    )


def stacked_bars(
    title: str, description: str, query: str, alias: str, grid: dm.GridPos, calc: str
) -> timeseries.Panel:
    """Bars per interval, one series per tag value, stacked, with a legend table."""
    return (
        time_series(title, description, grid, [calc])
        .with_target(target("A", query, alias=alias))
        .draw_style(cm.GraphDrawStyle.BARS)
        .fill_opacity(80)
        .stacking(cb.StackingConfig().mode(cm.StackingMode.NORMAL).group("A"))
    )


#: Grafana's table transformations for one InfluxQL result: merge the series of a
#: GROUP BY into one table, and drop the time column.
MERGED = [
    dm.DataTransformerConfig(id_val="merge", options={}),
    dm.DataTransformerConfig(id_val="organize", options={"excludeByName": {"Time": True}}),
]


def table_panel(title: str, description: str, grid: dm.GridPos) -> table.Panel:
    return framed(table.Panel(), title, description, grid).show_header(True)


def sorted_by(column: str) -> list[cb.TableSortByFieldState]:
    return [cb.TableSortByFieldState().display_name(column).desc(True)]


def stats_table(
    title: str,
    description: str,
    query: str,
    grid: dm.GridPos,
    *,
    transformations: list[dm.DataTransformerConfig] | None = None,
    sort_by: str | None = None,
) -> table.Panel:
    """A table of per-group statistics in seconds, with a `boots` count column."""
    panel = (
        table_panel(title, description, grid)
        .with_target(target("A", query, table=True))
        .unit("s")
        .override_by_name("boots", unit_is("none"))
        .transformations(MERGED if transformations is None else transformations)
    )
    return panel.sort_by(sorted_by(sort_by)) if sort_by else panel


def budget_targets(budgets: BudgetFile) -> list[Built[InfluxQuery]]:
    """Per board of the file: a line for each variant it names, then one for the
    board's other variants (and boots without one); none where there is no budget."""
    out: list[Built[InfluxQuery]] = []
    for board, b in budgets.boards.items():
        named = sorted(b.variants)
        for variant in [*named, None]:
            seconds = budgets.budgets(board, variant).power_to_ui_s
            if seconds is None:
                continue
            if variant is None:  # the variants the file does not name
                which = [f'"variant" != {influxql.string(v)}' for v in named]
            else:
                which = [f'"variant" = {influxql.string(variant)}']
            # InfluxQL has no constant series: the budget rides on the boots it applies to
            # (`last(x) * 0 + budget`), filled forward, so it shows only for what is selected.
            query = (
                f'SELECT last("power_to_ui_s") * 0 + {seconds!r} AS "budget" FROM "boot" '
                f'WHERE "board" = {influxql.string(board)} '
                f"AND {' AND '.join([*which, SELECTION])} "
                "AND \"outcome\" = 'ok' AND $timeFilter GROUP BY time($__interval) fill(previous)"
            )
            alias = BUDGET_PREFIX + board + (f" {variant}" if variant is not None else "")
            out.append(target(_ref(len(out) + 1), query, alias))
    return out


def power_to_ui_trend(budgets: BudgetFile, grid: dm.GridPos) -> timeseries.Panel:
    boots = target(
        "A",
        f'SELECT "power_to_ui_s" FROM "boot" WHERE {SELECTION} AND "outcome" = \'ok\' '
        'AND $timeFilter GROUP BY "board", "variant"',
        alias="$tag_board $tag_variant",
    )
    dashed: list[dm.DynamicConfigValue] = [
        dm.DynamicConfigValue(id_val="custom.lineStyle", value={"fill": "dash", "dash": [10, 10]}),
        dm.DynamicConfigValue(id_val="custom.showPoints", value="never"),
        fixed_color("red"),
    ]
    return (
        time_series(
            "Power-to-UI per boot, with budgets",
            "Each point is one boot (outcome ok); dashed lines are the budgets of each board "
            "and variant (config/budgets.toml).",
            grid,
            ["min", "mean", "max"],
        )
        .targets([boots, *budget_targets(budgets)])
        .unit("s")
        .draw_style(cm.GraphDrawStyle.LINE)
        .show_points(cm.VisibilityMode.ALWAYS)
        .point_size(6)
        .line_width(1)
        .override_by_regexp(f"^{BUDGET_PREFIX}", dashed)
    )


def stage_breakdown(grid: dm.GridPos) -> timeseries.Panel:
    return stacked_bars(
        "Stage breakdown over time",
        "Mean duration of each stage per interval, stacked: the bar height is "
        "the mean power-to-UI.",
        f'SELECT mean("duration_s") FROM "stage" WHERE {SELECTION} '
        f'AND "outcome" = {influxql.string(Outcome.OK)} AND $timeFilter '
        'GROUP BY time($__interval), "stage" fill(none)',
        "$tag_stage",
        grid,
        "mean",
    ).unit("s")


def stage_percentiles(grid: dm.GridPos) -> table.Panel:
    return stats_table(
        "Per-stage p50 / p95 per variant",
        "Over the time range, boots with outcome ok.",
        'SELECT percentile("duration_s", 50) AS "p50", '
        'percentile("duration_s", 95) AS "p95", count("duration_s") AS "boots" '
        f'FROM "stage" WHERE {SELECTION} AND "outcome" = \'ok\' AND $timeFilter '
        'GROUP BY "board", "variant", "stage"',
        grid,
    )


def latest_boots(grid: dm.GridPos) -> table.Panel:
    panel = (
        table_panel(
            "Latest boots", "The 20 most recent boots of the selection, every outcome.", grid
        )
        .with_target(
            target(
                "A",
                'SELECT "run_id", "board", "variant", "outcome", "power_to_ui_s", '
                '"power_to_ui_uncertainty_s", "stages_reached_count", "advisory_gain_s" '
                f'FROM "boot" WHERE {SELECTION} AND $timeFilter ORDER BY time DESC LIMIT 20',
                table=True,
            )
        )
        .sort_by(sorted_by("Time"))
    )
    for column in ("power_to_ui_s", "power_to_ui_uncertainty_s", "advisory_gain_s"):
        panel.override_by_name(column, unit_is("s"))
    return panel
