"""The HTML document: a header, sections, and plotly figures drawn once plotly.js is
loaded. The figures' JSON sits in the page, its numbers rounded to `DECIMALS` places
(the finest digit the page states), gzip + base64 (docs/report-html.md, "Size and
browsers")."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from rig import __version__
from rig.sinks.html import plotlyjs

CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; margin: 0;
  color: #222; background: #fafafa; }
header { background: #1f2d3d; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 6px; font-size: 22px; font-weight: 600; }
header .meta { color: #c9d3dd; font-size: 13px; }
header .total { font-size: 30px; font-weight: 600; margin-top: 10px; }
header .total small { font-size: 15px; color: #c9d3dd; font-weight: 400; }
main { padding: 8px 28px 40px; }
section { background: #fff; border: 1px solid #e3e3e3; border-radius: 6px; margin: 16px 0;
  padding: 12px 16px; }
section h2 { font-size: 16px; margin: 4px 0 10px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid #eee; vertical-align: top; }
th { background: #f3f5f7; font-weight: 600; }
code { font-size: 12px; }
.outcome { padding: 2px 8px; border-radius: 10px; font-weight: 600; font-size: 13px; }
.outcome.ok { background: #d9f0d3; color: #1b7837; }
.outcome.bad { background: #fddbc7; color: #b2182b; }
.empty, .note { color: #777; font-size: 13px; }
.unattributed { color: #8a6d3b; font-style: italic; }
.figure-error { color: #b2182b; font-weight: 600; }
footer { color: #888; font-size: 12px; padding: 0 28px 24px; }
"""

_DRAW = """
function bootrigFigures() {
  if (typeof DecompressionStream === "undefined")
    return Promise.reject(new Error("this browser cannot unpack the page's figures (no "
      + "DecompressionStream: Chromium 80+, Firefox 113+ and Safari 16.4+ have it)"));
  const bin = atob(document.getElementById("figures-gz").textContent.trim());
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text().then(JSON.parse);
}
bootrigPlotly().then(bootrigFigures).then((figures) => {
  for (const [id, fig] of Object.entries(figures)) {
    Plotly.newPlot(id, fig.data, fig.layout, {responsive: true, displaylogo: false});
  }
  document.body.dataset.plotted = Object.keys(figures).length;
}).catch((err) => {
  for (const el of document.querySelectorAll(".figure"))
    el.innerHTML = '<p class="figure-error"></p>', el.firstChild.textContent = String(err);
});
"""


def section(title: str, body: str, section_id: str) -> str:
    return f'<section id="{section_id}"><h2>{escape(title)}</h2>{body}</section>'


def figure_div(fig_id: str) -> str:
    return f'<div class="figure" id="{fig_id}"></div>'


#: Decimal places kept in the figures' numbers (seconds: 0.1 µs).
DECIMALS = 7


#: Trace properties that hold the figures' numbers (times, currents, bar bases), and the
#: nested ones: each point's uncertainty (error bars), a colour or size scale's values.
_NUMERIC = ("x", "y", "base", "width", "customdata")
_NESTED = (("error_x", "array"), ("error_y", "array"), ("marker", "color"), ("marker", "size"))


def _rounded(value: object, places: int) -> list[object] | None:
    """`value` as a list of rounded floats, or None when it is not an array of floats. A
    list, not a numpy array: plotly writes arrays as base64 float64, which gzip cannot
    shrink the way it shrinks the digits."""
    if value is None or isinstance(value, str):
        return None
    try:
        arr = np.asarray(value)
    except ValueError:
        return None
    if arr.dtype.kind != "f":
        return None
    out: list[object] = np.round(arr, places).tolist()
    return out


def _round_traces(fig: go.Figure, places: int) -> None:
    """Round the traces' number arrays in place (parsing the figure's JSON back to round
    it cost a soak tens of MB of heap it never gave back)."""
    for trace in fig.data:
        for prop in _NUMERIC:
            arr = _rounded(getattr(trace, prop, None), places)
            if arr is not None:
                setattr(trace, prop, arr)
        for parent, prop in _NESTED:
            owner = getattr(trace, parent, None)
            arr = _rounded(getattr(owner, prop, None), places) if owner is not None else None
            if arr is not None:
                setattr(owner, prop, arr)


def figures_script(figures: Mapping[str, go.Figure]) -> str:
    """The figures as one compact JSON object, their numbers rounded, gzip + base64."""
    parts = []
    for fig_id, fig in figures.items():
        _round_traces(fig, DECIMALS)
        parts.append(f"{json.dumps(fig_id)}:{pio.to_json(fig, validate=False, pretty=False)}")
    # In a <script> element only "</" can end it early.
    text = ("{" + ",".join(parts) + "}").replace("</", "<\\/")
    packed = plotlyjs.gzip_b64(text.encode())
    return f'<script id="figures-gz" type="application/octet-stream">{packed}</script>'


def document(
    title: str,
    header: str,
    sections: Sequence[str],
    figures: Mapping[str, go.Figure],
    js_mode: str = "gzip",
    js_src: str | None = None,
) -> str:
    """The page; `js_src`: the shared plotly.js's URL relative to it (mode `shared`)."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="bootrig {escape(__version__)}, plotly.js {plotlyjs.version()}">
<title>{escape(title)}</title>
<style>{CSS}</style>
</head>
<body>
<header>{header}</header>
<main>
{"".join(sections)}
</main>
<footer>bootrig {escape(__version__)} · figures: plotly.js {plotlyjs.version()},
{escape(plotlyjs.footer_note(js_mode, js_src))}</footer>
{plotlyjs.scripts(js_mode, js_src)}
{figures_script(figures)}
<script>{_DRAW}</script>
</body>
</html>
"""
