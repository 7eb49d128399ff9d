"""report.html for one artifact folder, and the comparison page of several boots."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from html import escape
from pathlib import Path

from rig.artifacts import atomic
from rig.artifacts.rundir import REPORT, REPORT_HTML, read_report
from rig.model.report import Report
from rig.sinks.html import plotlyjs, tables
from rig.sinks.html.compare import distribution_figure, stages_figure
from rig.sinks.html.console import ConsoleLine, console_lines
from rig.sinks.html.page import document, figure_div, section
from rig.sinks.html.style import seconds
from rig.sinks.html.timeline import boot_figure
from rig.sinks.terminal import fmt_u


def _reference(report: Report) -> str:
    return report.time_base.reference if report.time_base else "?"


def boot_header(report: Report) -> str:
    total = report.power_to_ui_s
    total_html = (
        f"{seconds(total)} <small>{fmt_u(report.power_to_ui_uncertainty_s)}</small>"
        if total is not None
        else "no power-to-UI <small>(the boot did not reach the UI)</small>"
    )
    meta = (
        f"run {escape(str(report.run_id))} · rig {escape(report.rig or '—')}"
        f" · started {escape(report.started_utc or '—')} UTC"
        f" · reference clock: {escape(_reference(report))}"
    )
    return (
        f'<h1 id="title">{escape(str(report.board))} / '
        f"{escape(report.variant or '—')} {tables.outcome(report.outcome)}</h1>"
        f'<div class="meta">{meta}</div>'
        f'<div class="total" id="power-to-ui">power-to-UI {total_html}</div>'
    )


def boot_page(
    report: Report, console: list[ConsoleLine], js_mode: str = "gzip", js_src: str | None = None
) -> str:
    note = ""
    if _reference(report) == "host":
        note = (
            '<p class="note">No analyzer capture: t = 0 is the power-on command and every '
            "time carries the serial latency band.</p>"
        )
    sections = [
        section("Timeline", note + figure_div("timeline"), "timeline-section"),
        section("Stages", tables.stages(report), "stages"),
        section("Where is the time going", tables.top(report), "top"),
        section("Advisories", tables.advisories(report), "advisories"),
        section("Slowest initcalls", tables.slowest_initcalls(report), "initcalls"),
        section("Clocks", f'<p class="note">{tables.clocks(report)}</p>', "clocks"),
    ]
    title = f"bootrig · {report.board} · {report.run_id}"
    figures = {"timeline": boot_figure(report, console)}
    return document(title, boot_header(report), sections, figures, js_mode, js_src)


def _js_src(js_mode: str, page: Path, root: Path) -> str | None:
    """In `shared` mode, the shared plotly.js under `root` as the page links it."""
    if js_mode != plotlyjs.SHARED:
        return None
    plotlyjs.ensure_asset(root)
    return plotlyjs.shared_src(page, root)


def write_html(
    folder: Path, js_mode: str = "gzip", out: Path | None = None, report: Report | None = None
) -> Path:
    """Write report.html next to report.json in an artifact folder (or to `out`).
    `report`: the folder's report when the caller has it. `shared` mode puts plotly.js
    in the folder holding the run folder (or `out`'s) and links it."""
    folder = Path(os.path.abspath(folder))
    if report is None:
        report = read_report(folder / REPORT)
    path = out or folder / REPORT_HTML
    root = folder.parent if out is None else Path(os.path.abspath(out)).parent
    src = _js_src(js_mode, path, root)
    # Whole or not at all: a reader never sees half a page.
    atomic.write_text(
        path, boot_page(report, console_lines(report, folder), js_mode, src), durable=False
    )
    return path


def comparison_header(reports: Sequence[Report]) -> str:
    outcomes = Counter(r.outcome for r in reports)
    groups = sorted({f"{r.board}/{r.variant or '—'}" for r in reports})
    return (
        f'<h1 id="title">{len(reports)} boots · {escape(", ".join(groups))}</h1>'
        '<div class="meta">'
        + " ".join(f"{tables.outcome(o)} ×{n}" for o, n in sorted(outcomes.items()))
        + "</div>"
    )


def comparison_page(
    reports: Sequence[Report], js_mode: str = "gzip", js_src: str | None = None
) -> str:
    figures = {"compare-stages": stages_figure(reports)}
    dist = distribution_figure(reports)
    sections = [
        section("Power-to-UI by board / variant", tables.groups(reports), "groups"),
        section("Stages per boot", figure_div("compare-stages"), "stages-section"),
    ]
    if dist is not None:
        figures["compare-dist"] = dist
        sections.append(section("Distributions", figure_div("compare-dist"), "dist-section"))
    sections.append(section("Boots", tables.boots(reports), "boots"))
    title = f"bootrig · {len(reports)} boots"
    return document(title, comparison_header(reports), sections, figures, js_mode, js_src)


def write_comparison(report_files: Sequence[Path], out: Path, js_mode: str = "gzip") -> Path:
    """The comparison page of several report.json files."""
    reports = [read_report(f) for f in report_files]
    reports.sort(key=lambda r: (r.started_utc or "", str(r.run_id)))
    src = _js_src(js_mode, out, Path(os.path.abspath(out)).parent)
    atomic.write_text(out, comparison_page(reports, js_mode, src), durable=False)
    return out
