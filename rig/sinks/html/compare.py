"""Several boots side by side (pure): each boot's stages as a Gantt row on one axis, and,
with enough boots, the distribution of every stage per board/variant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rig.outcomes import Outcome
from rig.sinks.html.style import base_layout, hover, ms, plus_minus, stage_colours

#: From this many boots on, the page adds the distributions.
DISTRIBUTION_MIN_BOOTS = 5


def label(r: dict[str, Any]) -> str:
    return f"{r.get('board')}/{r.get('variant') or '-'} · {r.get('run_id', '?')}"


def stage_order(reports: Sequence[dict[str, Any]]) -> list[str]:
    return list(stage_colours(s["name"] for r in reports for s in r.get("stages") or []))


def stages_figure(reports: Sequence[dict[str, Any]]) -> go.Figure:
    names = stage_order(reports)
    colours = stage_colours(names)
    labels = [label(r) for r in reports]
    fig = go.Figure()
    for name in names:
        rows = [
            (lab, s)
            for lab, r in zip(labels, reports, strict=True)
            for s in r.get("stages") or []
            if s["name"] == name and s.get("duration_s") is not None
        ]
        fig.add_trace(
            go.Bar(
                name=name,
                orientation="h",
                y=[lab for lab, _ in rows],
                x=[s["duration_s"] for _, s in rows],
                base=[s["start_s"] for _, s in rows],
                marker={"color": colours[name]},
                hovertext=[
                    hover(f"{name}: {ms(s['duration_s'])} {plus_minus(s.get('uncertainty_s'))}")
                    for _, s in rows
                ],
                hoverinfo="text",
            )
        )
    done = [(lab, r) for lab, r in zip(labels, reports, strict=True) if r.get("power_to_ui_s")]
    fig.add_trace(
        go.Scatter(
            name="power-to-UI ± uncertainty",
            y=[lab for lab, _ in done],
            x=[r["power_to_ui_s"] for _, r in done],
            mode="markers+text",
            text=[f"{r['power_to_ui_s']:.3f} s" for _, r in done],
            textposition="middle right",
            marker={"symbol": "line-ns-open", "size": 14, "color": "#222"},
            error_x={
                "type": "data",
                "array": [r.get("power_to_ui_uncertainty_s") or 0.0 for _, r in done],
                "visible": True,
                "thickness": 2,
            },
        )
    )
    failed = [
        (lab, r) for lab, r in zip(labels, reports, strict=True) if r.get("outcome") != Outcome.OK
    ]
    if failed:
        fig.add_trace(
            go.Scatter(
                name="outcome not ok",
                y=[lab for lab, _ in failed],
                x=[0.0] * len(failed),
                mode="markers+text",
                marker={"symbol": "x", "size": 11, "color": "#b2182b"},
                text=[hover(r.get("outcome")) for _, r in failed],
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


def distribution_figure(reports: Sequence[dict[str, Any]]) -> go.Figure | None:
    if len(reports) < DISTRIBUTION_MIN_BOOTS:
        return None
    names = stage_order(reports)
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in reports:
        groups.setdefault(f"{r.get('board')}/{r.get('variant') or '-'}", []).append(r)
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.72, 0.28],
        subplot_titles=("Stage durations by board/variant", "Power-to-UI"),
    )
    for i, (group, rs) in enumerate(groups.items()):
        xs, ys = [], []
        for r in rs:
            for s in r.get("stages") or []:
                if s.get("duration_s") is not None:
                    xs.append(s["name"])
                    ys.append(s["duration_s"])
        common = {"name": group, "legendgroup": group, "boxmean": True, "boxpoints": "all",
                  "jitter": 0.4, "pointpos": 0, "marker": {"size": 4}}  # fmt: skip
        colour = {"marker_color": f"hsl({(i * 67) % 360}, 55%, 45%)"}
        fig.add_trace(go.Box(x=xs, y=ys, **common, **colour), row=1, col=1)
        totals = [r["power_to_ui_s"] for r in rs if r.get("power_to_ui_s") is not None]
        fig.add_trace(
            go.Box(x=[group] * len(totals), y=totals, showlegend=False, **common, **colour),
            row=1,
            col=2,
        )
    fig.update_xaxes(categoryorder="array", categoryarray=names, row=1, col=1)
    fig.update_yaxes(title_text="seconds", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=1, col=2)
    fig.update_layout(**base_layout(520), boxmode="group", legend={"orientation": "h", "y": -0.15})
    return fig
