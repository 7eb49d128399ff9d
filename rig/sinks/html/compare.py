"""Several boots side by side (pure): each boot's stages as a Gantt row on one axis and,
with enough boots, every stage's distribution per board/variant."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rig.model.report import Report, Stage
from rig.outcomes import Outcome
from rig.sinks.html.style import base_layout, hover, ms, stage_colours
from rig.sinks.terminal import fmt_u

#: From this many boots on, the page adds the distributions.
DISTRIBUTION_MIN_BOOTS = 5


def group(r: Report) -> str:
    return f"{r.board}/{r.variant or '-'}"


def label(r: Report) -> str:
    return f"{group(r)} · {r.run_id or '?'}"


def stage_order(reports: Sequence[Report]) -> list[str]:
    return list(stage_colours(s.name for r in reports for s in r.stages))


def stages_figure(reports: Sequence[Report]) -> go.Figure:
    names = stage_order(reports)
    colours = stage_colours(names)
    labels = [label(r) for r in reports]
    fig = go.Figure()
    for name in names:
        rows: list[tuple[str, Stage]] = [
            (lab, s)
            for lab, r in zip(labels, reports, strict=True)
            for s in r.stages
            if s.name == name and s.reached
        ]
        fig.add_trace(
            go.Bar(
                name=name,
                orientation="h",
                y=[lab for lab, _ in rows],
                x=[s.duration_s for _, s in rows],
                base=[s.start_s for _, s in rows],
                marker={"color": colours[name]},
                hovertext=[
                    hover(f"{name}: {ms(s.duration_s)} {fmt_u(s.uncertainty_s)}") for _, s in rows
                ],
                hoverinfo="text",
            )
        )
    done = [
        (lab, r.power_to_ui_s, r) for lab, r in zip(labels, reports, strict=True) if r.power_to_ui_s
    ]
    fig.add_trace(
        go.Scatter(
            name="power-to-UI ± uncertainty",
            y=[lab for lab, _, _ in done],
            x=[t for _, t, _ in done],
            mode="markers+text",
            text=[f"{t:.3f} s" for _, t, _ in done],
            textposition="middle right",
            marker={"symbol": "line-ns-open", "size": 14, "color": "#222"},
            error_x={
                "type": "data",
                "array": [r.power_to_ui_uncertainty_s or 0.0 for _, _, r in done],
                "visible": True,
                "thickness": 2,
            },
        )
    )
    failed = [(lab, r) for lab, r in zip(labels, reports, strict=True) if r.outcome != Outcome.OK]
    if failed:
        fig.add_trace(
            go.Scatter(
                name="outcome not ok",
                y=[lab for lab, _ in failed],
                x=[0.0] * len(failed),
                mode="markers+text",
                marker={"symbol": "x", "size": 11, "color": "#b2182b"},
                text=[hover(r.outcome) for _, r in failed],
                textposition="middle left",
            )
        )
    fig.update_layout(
        **base_layout(min(3000, 160 + 26 * len(reports))),
        barmode="overlay",
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        xaxis={"title": {"text": "seconds from power-on"}, "ticksuffix": " s"},
        yaxis={"autorange": "reversed", "automargin": True},
    )
    return fig


def distribution_figure(reports: Sequence[Report]) -> go.Figure | None:
    if len(reports) < DISTRIBUTION_MIN_BOOTS:
        return None
    names = stage_order(reports)
    groups: dict[str, list[Report]] = {}
    for r in reports:
        groups.setdefault(group(r), []).append(r)
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.72, 0.28],
        subplot_titles=("Stage durations by board/variant", "Power-to-UI"),
    )
    for i, (name, rs) in enumerate(groups.items()):
        xs = [s.name for r in rs for s in r.stages if s.reached]
        ys = [s.duration_s for r in rs for s in r.stages if s.reached]
        common = {"name": name, "legendgroup": name, "boxmean": True, "boxpoints": "all",
                  "jitter": 0.4, "pointpos": 0, "marker": {"size": 4}}  # fmt: skip
        colour = {"marker_color": f"hsl({(i * 67) % 360}, 55%, 45%)"}
        fig.add_trace(go.Box(x=xs, y=ys, **common, **colour), row=1, col=1)
        totals = [r.power_to_ui_s for r in rs if r.power_to_ui_s is not None]
        fig.add_trace(
            go.Box(x=[name] * len(totals), y=totals, showlegend=False, **common, **colour),
            row=1,
            col=2,
        )
    fig.update_xaxes(categoryorder="array", categoryarray=names, row=1, col=1)
    fig.update_yaxes(title_text="seconds", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=1, col=2)
    fig.update_layout(**base_layout(520), boxmode="group", legend={"orientation": "h", "y": -0.15})
    return fig
