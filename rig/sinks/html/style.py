"""Colours and number formats shared by the figures and tables."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Any

import plotly.graph_objects as go
from plotly.colors import qualitative

PALETTE = qualitative.Set2 + qualitative.Pastel1
SOURCE_COLOURS = {"gpio": "#1b7837", "printk": "#2166ac", "host": "#b2182b"}
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"


def stage_colours(names: Iterable[str]) -> dict[str, str]:
    """A stable colour per stage name, in order of first appearance."""
    out: dict[str, str] = {}
    for n in names:
        if n not in out:
            out[n] = PALETTE[len(out) % len(PALETTE)]
    return out


def ms(v: float | None) -> str:
    return "—" if v is None else f"{v * 1e3:.3f} ms"


def seconds(v: float | None) -> str:
    return "—" if v is None else f"{v:.6f} s"


def hover(text: Any) -> str:
    """Text for a plotly hover label (which reads a subset of HTML)."""
    return escape(str(text))


def base_layout(height: int) -> dict[str, Any]:
    return {
        "template": "plotly_white",
        "height": height,
        "font": {"family": FONT, "size": 12},
        "margin": {"l": 140, "r": 30, "t": 60, "b": 50},
        "hoverlabel": {"font": {"family": "ui-monospace, monospace", "size": 11}},
    }


def row_note(fig: go.Figure, row: int, text: str) -> None:
    """A grey note in the middle of an empty row (paper coordinates: an empty row's
    axes may not be drawn)."""
    low, high = fig.layout[f"yaxis{row if row > 1 else ''}"].domain
    fig.add_annotation(
        text=text,
        xref="paper",
        yref="paper",
        x=0.5,
        y=(low + high) / 2,
        showarrow=False,
        font={"color": "#777", "size": 13},
    )
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, row=row, col=1)
