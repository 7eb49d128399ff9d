"""summary.html: one self-contained page (no scripts, no network) with the soak's
statistics, a histogram per stage with p50/p95/p99 lines, and the failed cycles."""

from __future__ import annotations

import html
import math

import numpy as np

from rig.model.soak import CycleRecord
from rig.model.summary import Distribution, SoakSummary
from rig.names import TOTAL
from rig.outcomes import Outcome
from rig.soak.summary import counted, samples

_W, _H, _PAD = 560, 120, 24
_BINS = 30
#: The narrowest bin (ms): 1 µs, the resolution the rig states its times to.
_RES_MS = 1e-3
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


def _bins(ms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts and edges (ms) over the data's own range, bins never narrower than _RES_MS:
    a smaller spread (one boot, float rounding) is one bin around the value, where
    numpy's 30 bins would be narrower than floats can tell apart."""
    lo, hi = float(ms.min()), float(ms.max())
    half = hi / 2 - lo / 2  # halves: no overflow, whatever finite values come
    if half < _RES_MS / 2:
        mid = lo + half
        edges = np.array([mid - _RES_MS / 2, mid + _RES_MS / 2])
    else:
        # rounded first: 3 µs of spread in ms is 0.0030000000000001137, 3 bins, not 4
        n = _BINS if half >= _BINS * _RES_MS else math.ceil(round(2 * half / _RES_MS, 6))
        edges = np.linspace(lo / 2, hi / 2, n + 1) * 2
    counts, _ = np.histogram(np.clip(ms, edges[0], edges[-1]), bins=edges)
    return counts, edges


def _decimals(lo: float, hi: float) -> int:
    """Decimals (ms) for the axis' two ends to differ: 3 (µs) when they do, up to 6."""
    return next((p for p in range(3, 6) if f"{lo:.{p}f}" != f"{hi:.{p}f}"), 6)


def histogram(name: str, values: list[float], d: Distribution) -> str:
    """An inline SVG histogram of `values` (seconds, shown in ms) with percentile lines;
    values not finite are left out and counted in the caption."""
    a = np.asarray(values, dtype=np.float64) * 1e3
    ms = a[np.isfinite(a)]
    dropped = int(a.size - ms.size)
    if not ms.size:
        why = f" ({dropped} not a finite number)" if dropped else ""
        return f"<p>{_e(name)}: no ok boots measured this stage{why}.</p>"
    counts, edges = _bins(ms)
    lo, hi = float(edges[0]), float(edges[-1])
    span = 2 * (hi / 2 - lo / 2)  # inf only for absurd values: the lines then sit at lo
    places = _decimals(lo, hi)
    caption = name + (" (no spread)" if len(counts) == 1 and ms.size > 1 else "")
    caption += f" ({dropped} not finite, left out)" if dropped else ""
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
        v = getattr(d, q)
        if isinstance(v, float) and math.isfinite(v) and lo <= v * 1e3 <= hi:
            x = _PAD + (v * 1e3 - lo) / span * (_W - 2 * _PAD)
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_PAD / 2}" y2="{_H}" stroke="{color}"/>'
                f'<text x="{x + 2:.1f}" y="{_PAD / 2 + 10}" font-size="10" fill="{color}">'
                f"{q}</text>"
            )
    parts.append(
        f'<text x="{_PAD}" y="{_H + 16}" font-size="11">{lo:.{places}f} ms</text>'
        f'<text x="{_W - _PAD}" y="{_H + 16}" font-size="11" text-anchor="end">'
        f"{hi:.{places}f} ms</text>"
        f'<text x="{_W / 2}" y="{_H + 16}" font-size="11" text-anchor="middle">'
        f"{_e(caption)}</text></svg>"
    )
    return "".join(parts)


def render(summary: SoakSummary, cycles: list[CycleRecord]) -> str:
    """The page; its histograms are drawn from the boots the statistics count."""
    boots = counted(cycles)
    head = ["stage"] + [f"{k} (ms)" if k != "n" else k for k in _STAT_KEYS]
    rows = [_stats_row(s.name, s) for s in summary.stages]
    rows.append(_stats_row(TOTAL, summary.power_to_ui))
    charts = [histogram(s.name, samples(boots, s.name), s) for s in summary.stages]
    charts.append(histogram(TOTAL, samples(boots, TOTAL), summary.power_to_ui))
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
