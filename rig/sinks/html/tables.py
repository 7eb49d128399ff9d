"""The HTML tables of the pages (escaped; numbers with their uncertainty)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from html import escape
from typing import Any

from rig.outcomes import Outcome
from rig.sinks.html.style import ms, plus_minus, seconds


def table(table_id: str, head: Sequence[str], rows: Sequence[Sequence[str]], empty: str) -> str:
    """`rows` cells are HTML already (escape text before)."""
    if not rows:
        return f'<p id="{table_id}" class="empty">{escape(empty)}</p>'
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table id="{table_id}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def stages(report: dict[str, Any]) -> str:
    rows = [
        [
            escape(s["name"]),
            ms(s.get("start_s")),
            ms(s.get("duration_s")) if s.get("duration_s") is not None else "not reached",
            escape(" · ".join(x for x in (s.get("source"), s.get("note")) if x) or "—"),
            plus_minus(s.get("uncertainty_s")),
        ]
        for s in report.get("stages") or []
    ]
    return table(
        "stages-table",
        ["stage", "start", "duration", "source", "uncertainty"],
        rows,
        "No stages configured.",
    )


def _evidence(items: Sequence[Any]) -> str:
    out = []
    for e in items[:5]:
        if isinstance(e, dict):
            at = f"{ms(e['t_s'])}: " if e.get("t_s") is not None else ""
            out.append(f"<code>{escape(at + str(e.get('text', '')))}</code>")
        else:
            out.append(f"<code>{escape(str(e))}</code>")
    more = f" (+{len(items) - 5} more)" if len(items) > 5 else ""
    return "<br>".join(out) + more


def _rests_on(a: dict[str, Any]) -> str:
    """What the gain comes from: the measured time (it never exceeds it) and what it is."""
    if a.get("evidence_s") is None:
        return ""
    return f"<br><small>of {ms(a['evidence_s'])} measured: {escape(a.get('basis') or '')}</small>"


def advisories(report: dict[str, Any]) -> str:
    rows = [
        [
            f"<b>{escape(a.get('title', ''))}</b><br><small>{escape(a.get('rule', ''))}</small>",
            ms(a.get("gain_s"))
            + (f" ({escape(a['gain_kind'])})" if a.get("gain_kind") else "")
            + _rests_on(a),
            _evidence(a.get("evidence") or []),
            escape(a.get("advice") or ""),
        ]
        for a in sorted(report.get("advisories") or [], key=lambda a: -(a.get("gain_s") or 0))
    ]
    return table(
        "advisories-table",
        ["advisory", "possible gain", "evidence", "advice"],
        rows,
        "No advisories: no known offender found in this boot.",
    )


def top(report: dict[str, Any]) -> str:
    """ "Where is the time going", with the time no evidence explains marked as such."""
    rows = []
    for r in report.get("top") or []:
        what = escape(r["name"])
        if r.get("kind") == "unattributed":
            what = f'<span class="unattributed">unattributed</span> {what}'
        else:
            what += f" <small>{escape(r.get('kind') or '')}</small>"
        rows.append(
            [
                str(r.get("rank", "")),
                escape(r.get("stage") or ""),
                what,
                ms(r.get("start_s")),
                ms(r.get("duration_s")),
                escape(r.get("source") or ""),
            ]
        )
    rest = report.get("unattributed") or {}
    by = rest.get("by_stage") or {}
    note = (
        '<p class="note">Unattributed: console silences no evidence explains, '
        + ", ".join(f"{escape(k)} {ms(v)}" for k, v in by.items())
        + ".</p>"
        if by
        else ""
    )
    notes = (report.get("analysis") or {}).get("notes") or []
    pacing = "".join(f'<p class="note">{escape(n)}</p>' for n in notes if "console" in n)
    body = table(
        "top-table",
        ["#", "in", "what", "start", "duration", "source"],
        rows,
        "Nothing on the console was timed.",
    )
    return body + note + pacing


def slowest_initcalls(report: dict[str, Any], n: int = 15) -> str:
    calls = [c for c in report.get("initcalls") or [] if c.get("duration_s") is not None]
    calls.sort(key=lambda c: -c["duration_s"])
    rows = [
        [
            f"<code>{escape(c['name'])}</code>",
            escape(c.get("module") or "built-in"),
            ms(c.get("start_s")),
            ms(c["duration_s"]),
            escape(str(c.get("return"))),
        ]
        for c in calls[:n]
    ]
    return table(
        "initcalls-table",
        ["initcall", "module", "start", "duration", "return"],
        rows,
        "No initcall timings (boot with initcall_debug).",
    )


def clocks(report: dict[str, Any]) -> str:
    c = report.get("clocks") or {}
    parts = []
    if fit := c.get("printk"):
        parts.append(
            f"printk clock: {len(fit.get('anchors', []))} anchors, drift "
            f"{fit['drift_ppm']:+.1f} ppm, rms residual {fit['rms_residual_s'] * 1e6:.1f} µs"
        )
    if host := c.get("host"):
        parts.append(
            f"serial arrival: {host.get('anchors', 0)} anchors, latency band "
            f"{host['spread_s'] * 1e3:.2f} ms ({plus_minus(host['uncertainty_s'])} per line)"
        )
    return "<br>".join(escape(p) for p in parts) or "No clock fits."


def boots(reports: Sequence[dict[str, Any]]) -> str:
    rows = [
        [
            f"<code>{escape(r.get('run_id', '?'))}</code>",
            escape(str(r.get("board"))),
            escape(str(r.get("variant") or "—")),
            f'<span class="outcome {"ok" if r.get("outcome") == Outcome.OK else "bad"}">'
            f"{escape(str(r.get('outcome')))}</span>",
            seconds(r.get("power_to_ui_s"))
            + (
                " " + plus_minus(r.get("power_to_ui_uncertainty_s"))
                if r.get("power_to_ui_s")
                else ""
            ),
            escape(str(r.get("started_utc") or "—")),
        ]
        for r in reports
    ]
    return table(
        "boots-table",
        ["run", "board", "variant", "outcome", "power-to-UI", "started (UTC)"],
        rows,
        "No boots.",
    )


def groups(reports: Sequence[dict[str, Any]]) -> str:
    """Power-to-UI statistics per board/variant: the variance-aware comparison."""
    by: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for r in reports:
        key = f"{r.get('board')} / {r.get('variant') or '—'}"
        counts[key] += 1
        if r.get("power_to_ui_s") is not None:
            by[key].append(r["power_to_ui_s"])
    rows = []
    for key in sorted(counts):
        v = sorted(by[key])
        rows.append(
            [
                escape(key),
                f"{len(v)} / {counts[key]}",
                seconds(statistics.median(v)) if v else "—",
                seconds(v[max(0, int(len(v) * 0.95 + 0.5) - 1)]) if v else "—",
                seconds(statistics.stdev(v)) if len(v) > 1 else "—",
                (seconds(v[0]) + " … " + seconds(v[-1])) if v else "—",
            ]
        )
    return table(
        "groups-table",
        ["board / variant", "ok / boots", "median", "p95", "std dev", "range"],
        rows,
        "No boots.",
    )
