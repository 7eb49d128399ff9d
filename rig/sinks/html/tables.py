"""The HTML tables of the pages (escaped; numbers with their uncertainty)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from html import escape

from rig import names
from rig.model.report import Advisory, Evidence, Report
from rig.outcomes import Outcome
from rig.sinks.clocks import KERNEL_NOTE, NO_T0, has_t0, printk_fit, start_clock
from rig.sinks.html.style import ms, seconds
from rig.sinks.terminal import fmt_u


def table(table_id: str, head: Sequence[str], rows: Sequence[Sequence[str]], empty: str) -> str:
    """`rows` cells are HTML already (escape text before)."""
    if not rows:
        return f'<p id="{table_id}" class="empty">{escape(empty)}</p>'
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table id="{table_id}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


_NO_T0 = f"{NO_T0[0].upper()}{NO_T0[1:]}."
_KERNEL = f"{KERNEL_NOTE}."


def _note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


def _start_cells(
    report: Report, rows: Sequence[tuple[float | None, str | None]]
) -> tuple[list[list[str]], list[str], str]:
    """Each (start, source) row's start cell, shown only on a clock the report names; when
    a row is on the kernel's clock, with its clock cell, a "clock" column and a note."""
    t0 = has_t0(report)
    clocks = [start_clock(src, t0) for _, src in rows]
    starts = [ms(t if c is not None else None) for (t, _), c in zip(rows, clocks, strict=True)]
    if not any(clocks):
        return [[s] for s in starts], ["start"], ""
    named = [escape("t = 0" if c == "" else c or "") for c in clocks]
    return [[s, c] for s, c in zip(starts, named, strict=True)], ["start", "clock"], _note(_KERNEL)


def stages(report: Report) -> str:
    t0 = has_t0(report)  # stage times are never on the kernel clock
    rows = [
        [
            escape(s.name),
            ms(s.start_s if t0 else None),
            ms(s.duration_s) if s.reached else "not reached",
            escape(" · ".join(x for x in (s.source, s.note) if x) or "—"),
            fmt_u(s.uncertainty_s),
        ]
        for s in report.stages
    ]
    return table(
        "stages-table",
        ["stage", "start", "duration", "source", "uncertainty"],
        rows,
        "No stages configured.",
    ) + ("" if t0 else _note(_NO_T0))


def _evidence(items: Sequence[Evidence]) -> str:
    out = []
    for e in items[:5]:
        at = f"{ms(e.t_s)}: " if e.t_s is not None else ""
        out.append(f"<code>{escape(at + (e.text or ''))}</code>")
    more = f" (+{len(items) - 5} more)" if len(items) > 5 else ""
    return "<br>".join(out) + more


def _rests_on(a: Advisory) -> str:
    """What the gain comes from: the measured time (it never exceeds it) and what it is."""
    if a.evidence_s is None:
        return ""
    return f"<br><small>of {ms(a.evidence_s)} measured: {escape(a.basis or '')}</small>"


def _knob(a: Advisory) -> str:
    """The setting that applies it (`rig try`'s knob), or why none does."""
    k = a.knob
    if k is None:
        return ""
    if k.where is None:
        return f'<br><small class="knob"><b>no knob:</b> {escape(k.why or k.text)}</small>'
    what = k.name if k.op == names.KNOB_REMOVE else k.setting
    how = "without " if k.op == names.KNOB_REMOVE else ""
    return (
        f'<br><small class="knob"><b>try:</b> {how}<code>{escape(what or "")}</code> '
        f"({escape(k.where)}): {escape(k.text)}</small>"
    )


def advisories(report: Report) -> str:
    rows = [
        [
            f"<b>{escape(a.title)}</b><br><small>{escape(a.rule)}</small>",
            ms(a.gain_s) + (f" ({escape(a.gain_kind)})" if a.gain_kind else "") + _rests_on(a),
            _evidence(a.evidence),
            escape(a.advice or "") + _knob(a),
        ]
        for a in sorted(report.advisories, key=lambda a: -(a.gain_s or 0))
    ]
    return table(
        "advisories-table",
        ["advisory", "possible gain", "evidence", "advice"],
        rows,
        "No advisories: no known offender found in this boot.",
    )


def top(report: Report) -> str:
    """ "Where is the time going", with the time no evidence explains marked as such."""
    rows = []
    starts, head, kernel = _start_cells(report, [(r.start_s, r.source) for r in report.top])
    for r, start in zip(report.top, starts, strict=True):
        what = escape(r.name)
        if r.kind == "unattributed":
            what = f'<span class="unattributed">unattributed</span> {what}'
        else:
            what += f" <small>{escape(r.kind or '')}</small>"
        rows.append(
            [
                str(r.rank),
                escape(r.stage or ""),
                what,
                *start,
                ms(r.duration_s),
                escape(r.source or ""),
            ]
        )
    by = report.unattributed.by_stage if report.unattributed else {}
    silences = ", ".join(f"{k} {ms(v)}" for k, v in by.items())
    note = _note(f"Unattributed: console silences no evidence explains, {silences}.") if by else ""
    pacing = "".join(_note(n) for n in report.analysis.notes if "console" in n)
    body = table(
        "top-table",
        ["#", "in", "what", *head, "duration", "source"],
        rows,
        "Nothing on the console was timed.",
    )
    return body + kernel + note + pacing


def slowest_initcalls(report: Report, n: int = 15) -> str:
    calls = [(c, c.duration_s) for c in report.initcalls if c.duration_s is not None]
    calls.sort(key=lambda cd: -cd[1])
    shown = calls[:n]
    starts, head, kernel = _start_cells(report, [(c.start_s, c.source) for c, _ in shown])
    rows = [
        [
            f"<code>{escape(c.name)}</code>",
            escape(c.module or "built-in"),
            *starts[i],
            ms(d),
            escape(str(c.return_code)),
        ]
        for i, (c, d) in enumerate(shown)
    ]
    head = ["initcall", "module", *head, "duration", "return"]
    empty = "No initcall timings (boot with initcall_debug)."
    return table("initcalls-table", head, rows, empty) + kernel


def clocks(report: Report) -> str:
    parts = []
    if fit := report.clocks.printk:
        parts.append(printk_fit(fit))
    if host := report.clocks.host:
        parts.append(
            f"serial arrival: {host.anchors} anchors, latency band "
            f"{host.spread_s * 1e3:.2f} ms ({fmt_u(host.uncertainty_s)} per line)"
        )
    return "<br>".join(escape(p) for p in parts) or "No clock fits."


def outcome(value: str) -> str:
    """The outcome as a badge: green for ok, red for anything else."""
    cls = "ok" if value == Outcome.OK else "bad"
    return f'<span class="outcome {cls}">{escape(value)}</span>'


def boots(reports: Sequence[Report]) -> str:
    rows = [
        [
            f"<code>{escape(r.run_id or '?')}</code>",
            escape(str(r.board)),
            escape(r.variant or "—"),
            outcome(r.outcome),
            seconds(r.power_to_ui_s)
            + (" " + fmt_u(r.power_to_ui_uncertainty_s) if r.power_to_ui_s else ""),
            escape(r.started_utc or "—"),
        ]
        for r in reports
    ]
    return table(
        "boots-table",
        ["run", "board", "variant", "outcome", "power-to-UI", "started (UTC)"],
        rows,
        "No boots.",
    )


def groups(reports: Sequence[Report]) -> str:
    """Power-to-UI statistics per board/variant: the variance-aware comparison."""
    by: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for r in reports:
        key = f"{r.board} / {r.variant or '—'}"
        counts[key] += 1
        if r.power_to_ui_s is not None and math.isfinite(r.power_to_ui_s):  # NaN: no time
            by[key].append(r.power_to_ui_s)
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
