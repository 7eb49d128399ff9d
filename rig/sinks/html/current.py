"""The bench supply's current through the boot, with each stage's energy written over
its span, on the timeline's time axis."""

from __future__ import annotations

import plotly.graph_objects as go

from rig.model.report import Report
from rig.sinks.html.style import hover


def supply_trace(report: Report) -> dict[str, list[float]] | None:
    """The readings on the reference clock, when the run had a supply that read back."""
    trace = report.power.trace if report.power else None
    if not trace or not trace.get("t_s"):
        return None
    return trace


def add_current(fig: go.Figure, report: Report, row: int) -> None:
    trace = supply_trace(report)
    if trace is None:
        return
    t, a = trace["t_s"], trace["a"]
    v: list[float | None] = list(trace.get("v") or [None] * len(t))
    fig.add_trace(
        go.Scatter(
            name="supply current",
            x=t,
            y=a,
            mode="lines+markers",
            marker={"size": 3, "color": "#8c510a"},
            line={"width": 1, "color": "#8c510a"},
            hovertext=[
                hover(f"{ai:.4f} A" + (f" at {vi:.3f} V = {ai * vi:.3f} W" if vi else ""))
                for ai, vi in zip(a, v, strict=True)
            ],
            hoverinfo="text+x",
        ),
        row=row,
        col=1,
    )
    top = max(a, default=0.0)
    for s in report.stages:
        if s.energy_j is None or s.start_s is None or s.end_s is None:
            continue
        fig.add_annotation(
            x=(s.start_s + s.end_s) / 2,
            y=top,
            xref=f"x{row}",
            yref=f"y{row}",
            text=f"{hover(s.name)}<br>{s.energy_j:.3f} J",
            showarrow=False,
            yanchor="bottom",
            font={"size": 10, "color": "#543005"},
        )
    fig.update_yaxes(title_text="A", rangemode="tozero", row=row, col=1)
