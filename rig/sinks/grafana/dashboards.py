"""The dashboards: variables rig, board, variant, place, and the panels on the grid."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.models import dashboard as dm

from rig.model.budgets import BudgetFile
from rig.sinks.grafana import panels_boot as boot
from rig.sinks.grafana import panels_soak as soak
from rig.sinks.grafana.common import BOARD_SELECTION, datasource, grid
from rig.sinks.grafana.influx import Built, InfluxAnnotation
from rig.sinks.influx import influxql
from rig.sinks.influx.bisects import BISECT
from rig.sinks.influx.changepoints import CHANGE_POINT

TAG = "bootrig"

#: Grafana 10.4's dashboard schema version: what the committed JSON has always declared,
#: so Grafana runs no migration on it (the SDK's own default, 36, would make it migrate).
SCHEMA_VERSION = 39


def variable(name: str, where: str = "") -> db.QueryVariable:
    query = f'SHOW TAG VALUES FROM "boot" WITH KEY = "{name}"'
    query += f" WHERE {where}" if where else ""
    return (
        db.QueryVariable(name)
        .label(name)
        .query(query)
        .datasource(datasource())
        .multi(True)
        .include_all(True)
        .all_value(".*")  # also matches boots without the tag (e.g. no variant)
        .refresh(dm.VariableRefresh.ON_DASHBOARD_LOAD)
        .sort(dm.VariableSort.ALPHABETICAL_ASC)
        # opens on "All" (what a query variable shows before its first refresh)
        .current(dm.VariableOption(selected=True, text=["All"], value=["$__all"]))
    )


VARIABLES = [
    variable("rig"),
    variable("board", '"rig" =~ /^$rig$/'),
    variable("variant", '"rig" =~ /^$rig$/ AND "board" =~ /^$board$/'),
    variable("place", '"rig" =~ /^$rig$/ AND "board" =~ /^$board$/'),
]


def annotation(name: str, query: str, tags: str, color: str) -> Built[dm.AnnotationQuery]:
    """Events from an InfluxQL query: its `text` column, and its `tags` (comma-separated)."""
    ds = datasource()
    return Built(InfluxAnnotation(query, "text", tags, name=name, datasource=ds, icon_color=color))


#: The change points `rig trend --mark` writes (docs/trend.md): one annotation per
#: direction, on every time series panel, filtered by the dashboard's selection.
CHANGE_POINT_COLORS = {"slower": "red", "faster": "green"}


def change_point_annotation(direction: str) -> Built[dm.AnnotationQuery]:
    query = (
        f'SELECT "text", "stage", "direction", "run_id" FROM "{CHANGE_POINT}" '
        f'WHERE $timeFilter AND "direction" = {influxql.string(direction)} AND {BOARD_SELECTION}'
    )
    return annotation(
        f"change points: {direction}", query, "stage,direction", CHANGE_POINT_COLORS[direction]
    )


#: A bisect's answer (`rig bisect --explain ... --mark`, docs/bisect.md): the commit that
#: made a change point, on the change point's time, beside its mark.
BISECT_COLOR = "purple"


def bisect_annotation() -> Built[dm.AnnotationQuery]:
    query = (
        f'SELECT "text", "stage", "commit", "status" FROM "{BISECT}" '
        f"WHERE $timeFilter AND {BOARD_SELECTION}"
    )
    return annotation("bisect: first bad commit", query, "stage,status", BISECT_COLOR)


def _dashboard(
    title: str,
    uid: str,
    description: str,
    panels: list[cogbuilder.Builder[dm.Panel]],  # any visualisation
    annotations: list[Built[dm.AnnotationQuery]] | None = None,
) -> dm.Dashboard:
    dash = (
        db.Dashboard(title)
        .uid(uid)
        .description(description)
        .tags([TAG])
        .timezone("utc")
        .time("now-7d", "now")
        .refresh("1m")
        .editable()
        .tooltip(dm.DashboardCursorSync.OFF)
        .variables(list(VARIABLES))
        .annotations(list(annotations or []))
        .link(
            db.DashboardLink("bootrig")
            .type(dm.DashboardLinkType.DASHBOARDS)
            .tags([TAG])
            .as_dropdown(False)
            .include_vars(True)
            .keep_time(True)
        )
    )
    for panel in panels:
        dash.with_panel(panel)
    built = dash.build()
    for i, p in enumerate(built.panels or [], start=1):
        p.id_val = i  # Grafana's panel ids: unique in the dashboard, the layout order
    built.schema_version = SCHEMA_VERSION  # the builder has no setter for it
    return built


def boot_time(budgets: BudgetFile) -> dm.Dashboard:
    return _dashboard(
        "bootrig: boot time",
        "bootrig-boot-time",
        "Power-to-UI trend against the budgets of each board and variant, where the time "
        "goes by stage, latest boots.",
        [
            boot.power_to_ui_trend(budgets, grid(9, 24, 0, 0)),
            boot.stage_breakdown(grid(9, 14, 0, 9)),
            boot.stage_percentiles(grid(9, 10, 14, 9)),
            boot.latest_boots(grid(9, 24, 0, 18)),
        ],
        [*(change_point_annotation(d) for d in CHANGE_POINT_COLORS), bisect_annotation()],
    )


def soak_and_kernel() -> dm.Dashboard:
    return _dashboard(
        "bootrig: soak and kernel",
        "bootrig-soak-kernel",
        "Soak outcomes by class, the slowest initcalls and the advisories' possible gains.",
        [
            soak.outcomes_over_time(grid(8, 16, 0, 0)),
            soak.outcomes_by_class(grid(8, 8, 16, 0)),
            soak.slowest_initcalls(grid(10, 14, 0, 8)),
            soak.advisories(grid(10, 10, 14, 8)),
        ],
    )


def all_dashboards(budgets: BudgetFile) -> list[dm.Dashboard]:
    return [boot_time(budgets), soak_and_kernel()]
