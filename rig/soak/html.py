"""summary.html: one self-contained page (no scripts, no network) with the soak's
statistics, a histogram per stage with p50/p95/p99 lines, and the failed cycles."""

from __future__ import annotations

import html

import numpy as np

from rig.model.soak import CycleRecord
from rig.model.summary import Distribution, SoakSummary
from rig.outcomes import Outcome

_W, _H, _PAD = 560, 120, 24
_BINS = 30
_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.ok { color: #2a7d2a; } .bad { color: #b22; }
svg { background: #fafafa; border: 1px solid #eee; margin-bottom: 1em; }
"""
_STAT_KEYS = ("n", "min", "p50", "p95", "p99", "max", "mean", "stddev")


def _e(v: object) -> str:
    return html.escape(str(v))


def _ms(v: object) -> str:
    return f"{float(v) * 1e3:.3f}" if isinstance(v, int | float) else ""


def _stats_row(name: str, d: Distribution) -> str:
    cells = [str(d.n)] + [_ms(getattr(d, k)) for k in _STAT_KEYS[1:]]
    return f"<tr><td>{_e(name)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def histogram(name: str, values: list[float], d: Distribution) -> str:
    """An inline SVG histogram of `values` (seconds, shown in ms) with percentile lines."""
    if not values:
        return f"<p>{_e(name)}: no ok boots measured this stage.</p>"
    counts, edges = np.histogram(np.asarray(values) * 1e3, bins=_BINS)
    lo, hi = float(edges[0]), float(edges[-1])
    span = hi - lo or 1.0
    top = int(counts.max()) or 1
    bw = (_W - 2 * _PAD) / len(counts)
    parts = [f'<svg width="{_W}" height="{_H + _PAD}" role="img" aria-label="{_e(name)}">']
    for i, c in enumerate(counts):
        h = (_H - _PAD) * int(c) / top
        x = _PAD + i * bw
        parts.append(
            f'<rect x="{x:.1f}" y="{_H - h:.1f}" width="{max(bw - 1, 1):.1f}" '
            f'height="{h:.1f}" fill="#4a7fb5"><title>{int(c)}</title></rect>'
        )
    for q, color in (("p50", "#2a7d2a"), ("p95", "#d08a00"), ("p99", "#b22")):
        if isinstance(v := getattr(d, q), float):
            x = _PAD + (v * 1e3 - lo) / span * (_W - 2 * _PAD)
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_PAD / 2}" y2="{_H}" stroke="{color}"/>'
                f'<text x="{x + 2:.1f}" y="{_PAD / 2 + 10}" font-size="10" fill="{color}">'
                f"{q}</text>"
            )
    parts.append(
        f'<text x="{_PAD}" y="{_H + 16}" font-size="11">{lo:.3f} ms</text>'
        f'<text x="{_W - _PAD}" y="{_H + 16}" font-size="11" text-anchor="end">{hi:.3f} ms</text>'
        f'<text x="{_W / 2}" y="{_H + 16}" font-size="11" text-anchor="middle">'
        f"{_e(name)}</text></svg>"
    )
    return "".join(parts)


def render(summary: SoakSummary, cycles: list[CycleRecord]) -> str:
    ok = [r for r in cycles if r.outcome == Outcome.OK]
    head = ["stage"] + [f"{k} (ms)" if k != "n" else k for k in _STAT_KEYS]
    rows = [_stats_row(s.name, s) for s in summary.stages]
    rows.append(_stats_row("power_to_ui", summary.power_to_ui))
    charts = [
        histogram(s.name, [v for r in ok if (v := r.stages.get(s.name))], s) for s in summary.stages
    ]
    charts.append(
        histogram(
            "power_to_ui",
            [r.power_to_ui_s for r in ok if r.power_to_ui_s],
            summary.power_to_ui,
        )
    )
    outcomes = "".join(
        f'<tr><td class="{"ok" if k == Outcome.OK else "bad"}">{_e(k)}</td><td>{v}</td>'
        f"<td>{100 * v / max(1, summary.cycles.run):.2f} %</td></tr>"
        for k, v in summary.outcomes.items()
    )
    failed = "".join(
        f'<tr><td>{_e(f.cycle)}</td><td><a href="{_e(f.run_id)}/console.log">'
        f"{_e(f.run_id)}</a></td><td>{_e(f.outcome)}</td><td>{_e(f.detail or '')}"
        "</td></tr>"
        for f in summary.failed_cycles
    )
    c = summary.cycles
    title = f"bootrig soak {summary.soak_id}"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>
<style>{_STYLE}</style></head><body>
<h1>{_e(title)}</h1>
<p>Board <b>{_e(summary.board)}</b> ({_e(summary.variant)}), rig {_e(summary.rig)},
started {_e(summary.started_utc)}, status <b>{_e(summary.status)}</b>,
{c.run} cycles in {summary.sessions} session(s), {summary.elapsed_s:.0f} s;
failure rate {100 * summary.failure_rate:.2f} %.</p>
<h2>Stages (ok boots)</h2>
<table><tr>{"".join(f"<th>{_e(h)}</th>" for h in head)}</tr>{"".join(rows)}</table>
{"".join(charts)}
<h2>Outcomes</h2>
<table><tr><th>outcome</th><th>cycles</th><th>share</th></tr>{outcomes}</table>
<h2>Failed cycles</h2>
<table><tr><th>cycle</th><th>run</th><th>outcome</th><th>detail</th></tr>{failed}</table>
</body></html>
"""
