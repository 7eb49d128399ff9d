"""Initcalls as a flame chart in time order: the stages they ran in at the bottom, each
call on the lowest level free at its start, so concurrent calls stack."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from rig.model.report import Initcall, Report, Stage
from rig.sinks.html.style import hover, ms, row_note


def pack(spans: Sequence[tuple[float, float]], base: int = 1) -> list[int]:
    """Level (>= base) for each (start, end) span, in the given order."""
    free_at: list[float] = []  # per level, when it becomes free
    levels = [0] * len(spans)
    for i in sorted(range(len(spans)), key=lambda i: spans[i][0]):
        start, end = spans[i]
        level = next((k for k, free in enumerate(free_at) if free <= start), len(free_at))
        if level == len(free_at):
            free_at.append(end)
        else:
            free_at[level] = end
        levels[i] = level + base
    return levels


def _span(c: Initcall, t_end: float) -> tuple[float, float]:
    """A call that never returned (the hang suspect) runs to the end of the record."""
    start = c.start_s or 0.0
    return start, t_end if c.duration_s is None else start + c.duration_s


def _hover(c: Initcall, returned: bool) -> str:
    return hover(
        c.name
        + (f" [{c.module}]" if c.module else "")
        + f"  start {ms(c.start_s)}"
        + (f"  took {ms(c.duration_s)}" if returned else "  never returned")
        + f"  ret {c.return_code}  via {c.source or '?'}"
    )


def _overlaps(s: Stage, first: float, last: float) -> bool:
    return s.start_s is not None and s.end_s is not None and s.start_s < last and s.end_s > first


def initcall_bars(
    calls: list[Initcall],
    spans: list[tuple[float, float]],
    levels: list[int],
    idx: list[int],
    returned: bool,
) -> go.Bar:
    """Returned calls coloured by duration; those that never returned in red, apart (a
    hang would flatten the colour scale)."""
    marker: dict[str, Any] = {"line": {"width": 0.3, "color": "#67001f"}}
    if returned:
        marker |= {
            "color": [(spans[i][1] - spans[i][0]) * 1e3 for i in idx],
            "colorscale": "YlOrRd",
            "cmin": 0,
            "colorbar": {"title": {"text": "ms"}, "len": 0.3, "y": 0.5, "thickness": 12},
        }
    else:
        marker |= {"color": "#b2182b", "pattern": {"shape": "/", "fgcolor": "#fff"}}
    return go.Bar(
        name="initcalls" if returned else "initcalls that never returned",
        orientation="h",
        y=[levels[i] for i in idx],
        x=[spans[i][1] - spans[i][0] for i in idx],
        base=[spans[i][0] for i in idx],
        width=0.92,
        marker=marker,
        text=[calls[i].name + ("" if returned else " (never returned)") for i in idx],
        textposition="inside",
        insidetextanchor="start",
        textangle=0,
        hovertext=[_hover(calls[i], returned) for i in idx],
        hoverinfo="text",
        showlegend=not returned,
    )


def add_initcalls(fig: go.Figure, report: Report, t_end: float, row: int) -> None:
    calls = [c for c in report.initcalls if c.start_s is not None]
    if not calls:
        row_note(fig, row, "No initcalls in this report (boot with initcall_debug)")
        return
    spans = [_span(c, t_end) for c in calls]
    hung = [c.duration_s is None for c in calls]
    levels = pack(spans)
    # Level 0: the stages the initcalls ran in, the frames they sit on.
    first, last = min(a for a, _ in spans), max(b for _, b in spans)
    frames = [s for s in report.stages if s.reached and _overlaps(s, first, last)]
    fig.add_trace(
        go.Bar(
            name="stage",
            orientation="h",
            y=[0] * len(frames),
            x=[s.duration_s for s in frames],
            base=[s.start_s for s in frames],
            marker={"color": "#d9d9d9"},
            text=[s.name for s in frames],
            textposition="inside",
            insidetextanchor="start",
            textangle=0,
            hoverinfo="text",
            hovertext=[f"stage {s.name}" for s in frames],
            showlegend=False,
            width=0.92,
        ),
        row=row,
        col=1,
    )
    for returned in (True, False):
        idx = [i for i, h in enumerate(hung) if h != returned]
        if idx:
            fig.add_trace(initcall_bars(calls, spans, levels, idx, returned), row=row, col=1)
    fig.update_yaxes(
        tickmode="array", tickvals=[0], ticktext=["stage"], autorange=True, row=row, col=1
    )
