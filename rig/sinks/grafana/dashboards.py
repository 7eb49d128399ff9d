"""The dashboards: variables rig, board, variant, and the panels laid out on the grid."""

from __future__ import annotations

from typing import Any

from grafanalib.core import Annotations, Dashboard, GridPos, Template, Templating, Time

from rig.sinks.grafana import panels_boot as boot
from rig.sinks.grafana import panels_soak as soak
from rig.sinks.grafana.budgets import Budget
from rig.sinks.grafana.common import DATASOURCE, SELECTION, ql_string
from rig.sinks.influx.changepoints import CHANGE_POINT

TAG = "bootrig"


class AllVariable(Template):  # inherits Template's attrs __init__
    """A query variable that opens on "All" (grafanalib's default current is a value)."""

    def to_json_data(self) -> dict[str, Any]:
        data: dict[str, Any] = super().to_json_data()
        data["current"] = {"selected": True, "text": ["All"], "value": ["$__all"]}
        return data


def variable(name: str, where: str = "") -> AllVariable:
    query = f'SHOW TAG VALUES FROM "boot" WITH KEY = "{name}"'
    query += f" WHERE {where}" if where else ""
    return AllVariable(
        name=name,
        label=name,
        query=query,
        dataSource=DATASOURCE,
        type="query",
        multi=True,
        includeAll=True,
        allValue=".*",  # also matches boots without the tag (e.g. no variant)
        refresh=1,  # on dashboard load
        sort=1,
    )


def templating() -> Templating:
    return Templating(
        list=[
            variable("rig"),
            variable("board", '"rig" =~ /^$rig$/'),
            variable("variant", '"rig" =~ /^$rig$/ AND "board" =~ /^$board$/'),
        ]
    )


#: The change points `rig trend --mark` writes (docs/trend.md): one annotation per
#: direction, on every time series panel, filtered by the dashboard's selection.
CHANGE_POINT_COLORS = {"slower": "red", "faster": "green"}


def change_point_annotation(direction: str) -> dict[str, Any]:
    query = (
        f'SELECT "text", "stage", "direction", "run_id" FROM "{CHANGE_POINT}" '
        f'WHERE $timeFilter AND "direction" = {ql_string(direction)} AND {SELECTION}'
    )
    return {
        "datasource": DATASOURCE,
        "enable": True,
        "hide": False,
        "iconColor": CHANGE_POINT_COLORS[direction],
        "name": f"change points: {direction}",
        "query": query,
        "textColumn": "text",
        "tagsColumn": "stage,direction",
    }


def _dashboard(
    title: str,
    uid: str,
    description: str,
    panels: list[Any],
    annotations: list[dict[str, Any]] | None = None,
) -> Dashboard:
    return Dashboard(
        annotations=Annotations(list=annotations or []),
        title=title,
        uid=uid,
        description=description,
        tags=[TAG],
        timezone="utc",
        time=Time("now-7d", "now"),
        refresh="1m",
        schemaVersion=39,
        templating=templating(),
        links=[
            {
                "type": "dashboards",
                "tags": [TAG],
                "asDropdown": False,
                "includeVars": True,
                "keepTime": True,
                "title": "bootrig",
            }
        ],
        panels=panels,
    ).auto_panel_ids()


def boot_time(budgets: dict[str, Budget]) -> Dashboard:
    return _dashboard(
        "bootrig: boot time",
        "bootrig-boot-time",
        "Power-to-UI trend against budgets, where the time goes by stage, latest boots.",
        [
            boot.power_to_ui_trend(budgets, GridPos(h=9, w=24, x=0, y=0)),
            boot.stage_breakdown(GridPos(h=9, w=14, x=0, y=9)),
            boot.stage_percentiles(GridPos(h=9, w=10, x=14, y=9)),
            boot.latest_boots(GridPos(h=9, w=24, x=0, y=18)),
        ],
        [change_point_annotation(d) for d in CHANGE_POINT_COLORS],
    )


def soak_and_kernel() -> Dashboard:
    return _dashboard(
        "bootrig: soak and kernel",
        "bootrig-soak-kernel",
        "Soak outcomes by class, the slowest initcalls and the advisories' possible gains.",
        [
            soak.outcomes_over_time(GridPos(h=8, w=16, x=0, y=0)),
            soak.outcomes_by_class(GridPos(h=8, w=8, x=16, y=0)),
            soak.slowest_initcalls(GridPos(h=10, w=14, x=0, y=8)),
            soak.advisories(GridPos(h=10, w=10, x=14, y=8)),
        ],
    )


def all_dashboards(budgets: dict[str, Budget]) -> list[Dashboard]:
    return [boot_time(budgets), soak_and_kernel()]
