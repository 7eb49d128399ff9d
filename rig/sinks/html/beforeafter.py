"""The `rig compare --html` page: the verdict table, and per stage the before and after
distributions side by side, with the Hodges-Lehmann difference in the title."""

from __future__ import annotations

from html import escape
from pathlib import Path

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rig.artifacts.atomic import write_text
from rig.compare.inputs import Side
from rig.compare.stats import Settings, StageComparison
from rig.names import TOTAL
from rig.sinks.html.page import document, figure_div, section
from rig.sinks.html.style import base_layout

_COLOURS = {"before": "#4575b4", "after": "#d73027"}
_VERDICT = {"slower": "bad", "faster": "ok", "no_change": "", "inconclusive": ""}


def _ms(v: float | None, sign: bool = False) -> str:
    if v is None:
        return "–"
    return f"{v * 1e3:+.2f} ms" if sign else f"{v * 1e3:.2f} ms"


def _each(results: list[StageComparison], s: Settings) -> str:
    return f"{results[0].confidence if results else 1 - s.alpha:.1%}"


def table(results: list[StageComparison], s: Settings) -> str:
    head = (
        "<tr><th>stage</th><th>before (median)</th><th>after (median)</th>"
        f"<th>difference</th><th>CI ({_each(results, s)})</th><th>p</th><th>verdict</th>"
        f"<th>n before/after</th><th>detectable (power {s.power:.0%})</th><th>boots for "
        f"{_ms(s.detect_s) if s.detect_s else '–'}</th></tr>"
    )
    rows = []
    for r in results:
        ci = "–" if r.ci_low_s is None else f"{_ms(r.ci_low_s, True)} .. {_ms(r.ci_high_s, True)}"
        p = "–" if r.p_value is None else f"{r.p_value:.3g}"
        verdict = f'<span class="outcome {_VERDICT[r.verdict]}">{r.verdict}</span>'
        rows.append(
            f"<tr><td>{escape(r.name)}</td><td>{_ms(r.median_before_s)}</td>"
            f"<td>{_ms(r.median_after_s)}</td><td>{_ms(r.difference_s, True)}</td>"
            f"<td>{ci}</td><td>{p}</td><td>{verdict}</td><td>{r.n_before}/{r.n_after}</td>"
            f"<td>{_ms(r.detectable_s)}</td><td>{r.boots_needed or '–'}</td></tr>"
        )
    notes = "".join(
        f'<p class="note">{escape(r.name)}: {escape(r.note)}</p>' for r in results if r.note
    )
    return f"<table>{head}{''.join(rows)}</table>{notes}"


def sources(side: Side) -> str:
    items = []
    for src in side.sources:
        text = f"{src.spec} ({src.kind}, {src.location}): {len(src.boots)} boots count"
        if src.warmup:
            text += "; warm-up left out: " + ", ".join(b.id for b in src.warmup)
        if src.excluded:
            text += "; excluded: " + ", ".join(f"{i} ({r})" for i, r in src.excluded)
        items.append(f"<li>{escape(text)}</li>")
    return f"<ul>{''.join(items)}</ul>"


def figure(results: list[StageComparison], before: Side, after: Side) -> go.Figure:
    cols = 3
    rows = (len(results) + cols - 1) // cols
    titles = [
        f"{r.name}: {_ms(r.difference_s, True)} ({r.verdict})".replace("–", "n/a") for r in results
    ]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, vertical_spacing=0.12)
    samples = {"before": before.samples(), "after": after.samples()}
    for i, r in enumerate(results):
        row, col = i // cols + 1, i % cols + 1
        for name, data in samples.items():
            ys = [v * 1e3 for v in data.get(r.name, [])]
            fig.add_trace(
                go.Box(
                    y=ys,
                    name=f"{name} (n={len(ys)})",
                    legendgroup=name,
                    showlegend=i == 0,
                    marker={"color": _COLOURS[name], "size": 4},
                    boxpoints="all",
                    jitter=0.4,
                    pointpos=0,
                    boxmean=True,
                ),
                row=row,
                col=col,
            )
        fig.update_yaxes(title_text="ms", row=row, col=col)
    fig.update_layout(**base_layout(300 * rows + 80), legend={"orientation": "h", "y": 1.05})
    return fig


def page(results: list[StageComparison], before: Side, after: Side, s: Settings) -> str:
    regressions = [r.name for r in results if r.verdict == "slower"]
    undecided = [r.name for r in results if r.verdict == "inconclusive"]
    total = next((r for r in results if r.name == TOTAL), None)
    headline = _ms(total.difference_s, True) if total else "–"
    header = (
        "<h1>Before / after</h1>"
        f'<div class="meta">{1 - s.alpha:.0%} confidence for all stages together '
        f"({_each(results, s)} each) · Hodges-Lehmann difference, "
        "Mann-Whitney U · slower: "
        f"{escape(', '.join(regressions)) or 'none'}"
        + (
            f" · inconclusive (the boots cannot tell): {escape(', '.join(undecided))}"
            if undecided
            else ""
        )
        + "</div>"
        f'<div class="total">{headline} <small>power-to-UI, after - before</small></div>'
    )
    sections = [
        section("Verdict per stage", table(results, s), "verdict"),
        section("Distributions", figure_div("dist"), "distributions"),
        section("Before", sources(before), "before"),
        section("After", sources(after), "after"),
    ]
    return document(
        "bootrig: before / after", header, sections, {"dist": figure(results, before, after)}
    )


def write_page(
    path: Path, results: list[StageComparison], before: Side, after: Side, s: Settings
) -> Path:
    write_text(path, page(results, before, after, s))
    return path
