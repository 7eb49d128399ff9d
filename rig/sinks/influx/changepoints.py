"""Change points as InfluxDB points (measurement `change_point`) for the dashboards'
annotations (`rig trend --mark`); a series' marks in the span analysed are replaced
(docs/trend.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rig.sinks.influx import influxql
from rig.sinks.influx.client import Client, InfluxError
from rig.sinks.influx.lineproto import Point, encode_all, fields

CHANGE_POINT = "change_point"


@dataclass(frozen=True)
class Mark:
    board: str
    variant: str
    stage: str
    rig: str
    direction: str
    time_ns: int
    run_id: str
    shift_s: float
    median_before_s: float
    median_after_s: float
    p_value: float

    @property
    def text(self) -> str:
        return (
            f"{self.stage} {self.direction} by {self.shift_s * 1e3:+.2f} ms "
            f"({self.median_before_s * 1e3:.2f} -> {self.median_after_s * 1e3:.2f} ms, "
            f"p = {self.p_value:.2g}); first boot {self.run_id}"
        )

    def point(self) -> Point:
        tags = {"rig": self.rig, "board": self.board, "variant": self.variant}
        tags |= {"stage": self.stage, "direction": self.direction}
        values = fields(
            shift_s=self.shift_s,
            median_before_s=self.median_before_s,
            median_after_s=self.median_after_s,
            p_value=self.p_value,
            run_id=self.run_id,
            text=self.text,
        )
        return Point(CHANGE_POINT, tags, values, self.time_ns)


def replace_marks(
    client: Client,
    database: str,
    series: tuple[str, str, str],
    span_ns: tuple[int, int],
    marks: Sequence[Mark],
) -> str | None:
    """Delete the series' marks in `span_ns`, write `marks`. Returns a note when the
    server could not delete (the new marks are written all the same)."""
    board, variant, stage = series
    # `"variant" = ''` matches the points without a variant tag, and only them.
    tags = zip(("board", "variant", "stage"), series, strict=True)
    clauses = [f"{influxql.ident(k)} = {influxql.string(v)}" for k, v in tags]
    cond = " AND ".join([*clauses, f"time >= {span_ns[0]}", f"time <= {span_ns[1]}"])
    note = None
    try:
        client.query(f"DELETE FROM {influxql.ident(CHANGE_POINT)} WHERE {cond}", database)
    except InfluxError as e:
        if not e.data_rejected:
            raise  # the server is away: nothing can be marked
        note = f"old marks of {board}/{variant or '-'}/{stage} not deleted: {e}"
    lines = encode_all(m.point() for m in marks)
    if lines:
        client.write(lines, precision="ns")
    return note
