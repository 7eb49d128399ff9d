"""The boot-time history `rig trend` reads (docs/trend.md): per board, variant and stage,
the durations of the `ok` boots in power-on order, with each boot's run id and rig;
stage points joined to their boot point by board, variant, rig and time.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rig.names import TOTAL
from rig.outcomes import Outcome
from rig.sinks.influx import influxql
from rig.sinks.influx.client import Client
from rig.sinks.influx.points import BOOT, STAGE
from rig.sinks.influx.select import read_points, where


@dataclass(frozen=True)
class HistoryBoot:
    time_ns: int  # power-on time
    run_id: str
    rig: str
    duration_s: float


@dataclass
class Series:
    board: str
    variant: str  # "" for boots without a variant
    stage: str
    boots: list[HistoryBoot] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.board, self.variant, self.stage)


def read_history(
    client: Client, database: str, selector: dict[str, str], stage: str | None = None
) -> list[Series]:
    """Every series the selection holds, by board, variant, then stage in boot order
    (power_to_ui last); boots in time order. `stage` keeps only that one."""
    cond = " AND ".join(
        c for c in (where(selector), f'"outcome" = {influxql.string(Outcome.OK)}') if c
    )
    by = '"board", "variant", "rig"'
    boots: dict[tuple[str, str, str, int], tuple[str, Any]] = {}
    for tags, v in read_points(client, database, BOOT, cond, by):
        if v.get("cold_boot") is False:
            continue  # not a true cold boot (docs/cold-boot.md): not part of the trend
        key = (tags.get("board", ""), tags.get("variant", ""), tags.get("rig", ""), int(v["time"]))
        boots[key] = (str(v.get("run_id") or v["time"]), v.get("power_to_ui_s"))
    series: dict[tuple[str, str, str], Series] = {}
    starts: dict[str, list[float]] = defaultdict(list)

    def add(board: str, variant: str, name: str, boot: HistoryBoot) -> None:
        s = series.setdefault((board, variant, name), Series(board, variant, name))
        s.boots.append(boot)

    if stage != TOTAL:
        stage_cond = cond + (f' AND "stage" = {influxql.string(stage)}' if stage else "")
        for tags, v in read_points(client, database, STAGE, stage_cond, f'{by}, "stage"'):
            board, variant, rig = (tags.get(k, "") for k in ("board", "variant", "rig"))
            t = int(v["time"])
            boot = boots.get((board, variant, rig, t))
            name = tags.get("stage")
            if boot is None or not name or v.get("duration_s") is None:
                continue  # a stage never reached, or its boot point is not selected
            add(board, variant, name, HistoryBoot(t, boot[0], rig, float(v["duration_s"])))
            starts[name].append(float(v.get("start_s") or 0.0))
    if stage in (None, TOTAL):
        for (board, variant, rig, t), (run_id, total) in boots.items():
            if total is not None:
                add(board, variant, TOTAL, HistoryBoot(t, run_id, rig, float(total)))
    order = {name: float(np.median(v)) for name, v in starts.items()}
    for s in series.values():
        s.boots.sort(key=lambda b: (b.time_ns, b.rig))
    return sorted(
        series.values(),
        key=lambda s: (s.board, s.variant, s.stage == TOTAL, order.get(s.stage, 0.0), s.stage),
    )
