"""One boot on the reference clock (pure): stages as a Gantt chart with their boundary
uncertainty, initcalls as a flame chart, console lines, GPIO markers across all three."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rig.model.report import Report
from rig.sinks.clocks import has_t0
from rig.sinks.html.console import ConsoleLine
from rig.sinks.html.current import add_current, supply_trace
from rig.sinks.html.flame import add_initcalls
from rig.sinks.html.style import (
    SOURCE_COLOURS,
    base_layout,
    hover,
    ms,
    row_note,
    stage_colours,
)
from rig.sinks.terminal import fmt_u

STAGES, INITCALLS, CONSOLE, CURRENT = 1, 2, 3, 4


def end_of_boot(report: Report, console: list[ConsoleLine]) -> float:
    times: list[float | None] = [e.t_s for e in report.events]
    times += [s.end_s or s.start_s or 0.0 for s in report.stages]
    times += [c.t_s for c in console[-1:]]
    return max([t for t in times if t is not None] or [0.0])


def add_stages(fig: go.Figure, report: Report) -> None:
    stages = report.stages
    colours = stage_colours(s.name for s in stages)
    done = [s for s in stages if s.reached]
    fig.add_trace(
        go.Bar(
            name="stages",
            orientation="h",
            y=[s.name for s in done],
            x=[s.duration_s for s in done],
            base=[s.start_s for s in done],
            marker={"color": [colours[s.name] for s in done], "line": {"width": 0}},
            text=[ms(s.duration_s) for s in done],
            textposition="auto",
            textangle=0,
            customdata=[[s.source, fmt_u(s.uncertainty_s), ms(s.start_s)] for s in done],
            hovertemplate="<b>%{y}</b><br>%{customdata[2]} + %{text} %{customdata[1]}"
            "<br>source %{customdata[0]}<extra></extra>",
            showlegend=False,
        ),
        row=STAGES,
        col=1,
    )
    # Each boundary with its own uncertainty (the stage's combines its two ends).
    xs, ys, us, tips = [], [], [], []
    for s in done:
        for side, at, b in (("start", s.start_s, s.start), ("end", s.end_s, s.end)):
            u = b.uncertainty_s if b else None
            xs.append(at)
            ys.append(s.name)
            us.append(u or 0.0)
            at_event = f"{b.event} via {b.source}" if b else "? via ?"
            tips.append(hover(f"{s.name} {side}: {at_event}") + f" {fmt_u(u)}")
    fig.add_trace(
        go.Scatter(
            name="boundary ± uncertainty",
            x=xs,
            y=ys,
            mode="markers",
            marker={"symbol": "line-ns-open", "size": 14, "color": "#333"},
            error_x={"type": "data", "array": us, "visible": True, "thickness": 2, "width": 6},
            hovertext=tips,
            hoverinfo="text",
        ),
        row=STAGES,
        col=1,
    )
    missing = [s for s in stages if not s.reached]
    if missing:
        fig.add_trace(
            go.Scatter(
                name="not reached",
                x=[s.start_s or 0.0 for s in missing],
                y=[s.name for s in missing],
                mode="markers+text",
                marker={"symbol": "x", "size": 12, "color": "#b2182b"},
                text=["not reached"] * len(missing),
                textposition="middle right",
            ),
            row=STAGES,
            col=1,
        )
    fig.update_yaxes(
        categoryorder="array",
        categoryarray=[s.name for s in reversed(stages)],
        row=STAGES,
        col=1,
    )


def add_console(fig: go.Figure, report: Report, console: list[ConsoleLine]) -> None:
    if not console:
        row_note(fig, CONSOLE, "No console in this folder")
        return
    for source in sorted({c.source for c in console}):
        mine = [c for c in console if c.source == source]
        fig.add_trace(
            go.Scatter(
                name=f"console ({source} clock)",
                x=[c.t_s for c in mine],
                y=[c.index for c in mine],
                mode="markers",
                marker={
                    "size": [9 if c.tag else 5 for c in mine],
                    "symbol": ["diamond" if c.tag else "circle" for c in mine],
                    "color": SOURCE_COLOURS.get(source, "#555"),
                },
                error_x={
                    "type": "data",
                    "array": [c.uncertainty_s for c in mine],
                    "visible": True,
                    "thickness": 1,
                    "width": 0,
                },
                hovertext=[
                    hover(f"{c.index}: {c.text[:160]}  ({fmt_u(c.uncertainty_s)})") for c in mine
                ],
                hoverinfo="text",
            ),
            row=CONSOLE,
            col=1,
        )
    lines = {c.index: c for c in console}
    evidence = [
        (a, e)
        for a in report.advisories
        for e in a.evidence
        if e.t_s is not None and e.line in lines
    ]
    if evidence:
        fig.add_trace(
            go.Scatter(
                name="advisory evidence",
                x=[e.t_s for _, e in evidence],
                y=[e.line for _, e in evidence],
                mode="markers",
                marker={
                    "symbol": "star",
                    "size": 13,
                    "color": "#e08214",
                    "line": {"width": 1, "color": "#7f3b08"},
                },
                hovertext=[hover(f"{a.title}: {e.text or ''}") for a, e in evidence],
                hoverinfo="text",
            ),
            row=CONSOLE,
            col=1,
        )
    fig.update_yaxes(autorange="reversed", title_text="line", row=CONSOLE, col=1)


def add_markers(fig: go.Figure, report: Report) -> None:
    """Every GPIO marker (or host marker without a capture) as a line through all rows."""
    events = [e for e in report.events if e.source in ("gpio",)]
    if not events:
        events = [e for e in report.events if e.name == "power"]
    for i, e in enumerate(events):
        fig.add_shape(
            type="line",
            x0=e.t_s,
            x1=e.t_s,
            xref="x",
            yref="paper",
            y0=0,
            y1=1,
            line={"dash": "dot", "width": 1, "color": "#555"},
        )
        fig.add_annotation(
            x=e.t_s,
            xref="x",
            yref="paper",
            y=1.065 + 0.022 * (i % 2),
            text=hover(e.name),
            showarrow=False,
            font={"size": 10, "color": "#333"},
        )


def boot_figure(report: Report, console: list[ConsoleLine]) -> go.Figure:
    # an empty flame chart only needs room for its note
    heights = [0.27, 0.43, 0.30] if report.initcalls else [0.38, 0.14, 0.48]
    titles = [
        "Stages (Gantt), boundaries ± uncertainty",
        "Initcalls (flame chart, time order; colour = duration)",
        "Console lines (first byte, mapped onto the reference clock)",
    ]
    current = supply_trace(report) is not None
    if current:  # a supply read back: its current, and each stage's joules, below
        heights = [h * 0.8 for h in heights] + [0.2]
        titles.append("Supply current (readings on the reference clock), energy per stage")
    fig = make_subplots(
        rows=len(heights),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.07 if not current else 0.055,
        row_heights=heights,
        subplot_titles=titles,
    )
    fig.update_annotations(x=0, xanchor="left")  # the row titles, left like the sections'
    t_end = end_of_boot(report, console)
    add_stages(fig, report)
    add_initcalls(fig, report, t_end, INITCALLS)
    add_console(fig, report, console)
    add_current(fig, report, CURRENT)
    add_markers(fig, report)
    reference = report.time_base.reference if report.time_base else "?"
    axis = f"seconds from power-on (reference clock: {reference})"
    if not has_t0(report):  # no power-up edge: the times are not from power-on
        axis = f"seconds on the {reference} clock: no t = 0 (no power-up edge), durations only"
    fig.update_xaxes(
        title_text=axis,
        row=CURRENT if current else CONSOLE,
        col=1,
    )
    fig.update_xaxes(showticklabels=True, ticksuffix=" s", range=[-0.02 * t_end, t_end * 1.03])
    layout = base_layout(1180 if current else 980)
    layout["margin"]["t"] = 110  # room for the marker names above the first row
    fig.update_layout(
        **layout,
        barmode="overlay",
        uniformtext={"minsize": 9, "mode": "hide"},
        legend={"orientation": "h", "y": -0.08, "x": 0},
    )
    return fig
