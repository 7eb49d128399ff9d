"""The stage table people read in the terminal (rich); times on the clock rule of
rig.sinks.clocks."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rig.model.clocks import UartTap
from rig.model.report import Report, Stage
from rig.names import TOTAL
from rig.sinks.clocks import KERNEL_NOTE, NO_T0, has_t0, printk_fit, start_clock


def fmt_s(v: float | None) -> str:
    return "—" if v is None else f"{v:.6f}"


def fmt_u(v: float | None) -> str:
    if v is None:
        return "—"
    if v < 1e-3:
        return f"± {v * 1e6:.1f} µs"
    return f"± {v * 1e3:.2f} ms"


#: Columns of numbers, right-aligned.
_RIGHT = {"#", "start (s)", "duration (s)", "uncertainty", "gain (s)"}


def _table(title: str, *columns: str) -> Table:
    t = Table(title=title, title_justify="left")
    for name in columns:
        t.add_column(name, justify="right" if name in _RIGHT else "left")
    return t


def _source(stage: Stage) -> str:
    """The stage's source, with the note on a boundary that had no hook of its own (a
    landmark, an initramfs boot's missing root mount, a tag hidden by quiet)."""
    src = stage.source or ""
    extra = [n for n in (stage.note or "").split("; ") if n and n not in src.split("+")]
    if src and extra:
        return f"{src} ({'; '.join(extra)})"
    return src or "; ".join(extra) or "not reached"


def stage_table(report: Report) -> Table:
    title = (
        f"{escape(str(report.board))} / {escape(str(report.variant or '-'))}"
        f"  ·  run {escape(str(report.run_id))}"
        f"  ·  outcome [bold]{escape(report.outcome)}[/]"
    )
    t = _table(title, "stage", "start (s)", "duration (s)", "source", "uncertainty")
    t0 = has_t0(report)
    for s in report.stages:
        t.add_row(
            escape(s.name),
            fmt_s(s.start_s if t0 else None),  # stage times are never on the kernel clock
            fmt_s(s.duration_s),
            escape(_source(s)),
            fmt_u(s.uncertainty_s),
        )
    t.add_section()
    t.add_row(
        f"[bold]{TOTAL}[/]",
        fmt_s(0.0 if report.power_to_ui_s is not None else None),
        f"[bold]{fmt_s(report.power_to_ui_s)}[/]",
        "",
        fmt_u(report.power_to_ui_uncertainty_s),
    )
    return t


def top_table(report: Report, n: int = 10) -> Table:
    rows = report.top[:n]
    t0 = has_t0(report)
    clocks = [start_clock(row.source, t0) for row in rows]
    # Rows off t = 0 say their clock; a table all on t = 0 needs no column for it.
    named = any(clocks)
    # "in": the software that spent it (bootloader, kernel, userspace)
    head = ["#", "in", "what", "start (s)", *(["clock"] if named else []), "duration (s)", "source"]
    t = _table("where is the time going", *head)
    for row, clock in zip(rows, clocks, strict=True):
        name = escape(row.name)
        if row.kind == "unattributed":  # time no evidence explains: say so
            name = f"[dim]unattributed[/] {name}"
        start = fmt_s(row.start_s if clock is not None else None)
        where = [("t = 0" if clock == "" else clock or "")] if named else []
        t.add_row(
            str(row.rank),
            escape(row.stage or ""),
            name,
            start,
            *where,
            fmt_s(row.duration_s),
            escape(row.source or ""),
        )
    return t


def _clock_lines(report: Report) -> list[str]:
    """What the tables' times are on, when it is not simply t = 0."""
    out = []
    if not has_t0(report):
        out.append(f"[yellow]{NO_T0}[/]")
    if any(row.source == "printk_relative" for row in report.top):
        out.append(KERNEL_NOTE)
    power = next((e.extra for e in report.events if e.name == "power"), {})
    window, cmd = power.get("rail_within_s"), power.get("power_on_command_s")
    if isinstance(window, list) and len(window) == 2:  # console only: t = 0 is a stamp
        how = (
            f"the power-on command returned at {cmd * 1e3:.1f} ms, then a relay's delay"
            if isinstance(cmd, int | float)
            else "how long the power-on command took is not recorded: a relay's delay only"
        )
        out.append(
            f"the rail rose {window[0] * 1e3:.1f}-{window[1] * 1e3:.1f} ms after t = 0 "
            f"({how}): what is timed from power-on states it"
        )
    return out


def _analysis_lines(report: Report) -> list[str]:
    """What the analysis said about this run beside the numbers (report.json
    `analysis`): why it is invalid, what failed, and its notes."""
    a = report.analysis
    out = [f"[red]invalid:[/] {escape(x)}" for x in a.invalid]
    if a.rig_error:
        out.append(f"[red]rig error:[/] {escape(a.rig_error)}")
    return out + [f"[yellow]note:[/] {escape(x)}" for x in a.notes]


def advice_table(report: Report) -> Table:
    # The advice text itself is long; report.json and report.html carry it.
    t = _table("advice (details in report.json)", "gain (s)", "how sure", "rule", "finding")
    for a in report.advisories:
        # The knob `rig try` would turn, under the finding (reports from before knobs
        # show the finding alone).
        knob = f"\n[dim]{escape(a.knob.label)}[/]" if a.knob else ""
        t.add_row(
            fmt_s(a.gain_s), escape(a.gain_kind or ""), escape(a.rule), escape(a.title) + knob
        )
    return t


def print_report(report: Report, console: Console, folder: str | None = None) -> None:
    console.print(stage_table(report))
    if report.top:
        console.print(top_table(report))
    if report.advisories:
        console.print(advice_table(report))
    tb = report.time_base
    if tb is not None and tb.reference == "analyzer" and tb.power_edge_sample is not None:
        console.print(
            f"t = 0: {escape(tb.t0)} (sample {tb.power_edge_sample} at "
            f"{(tb.samplerate_hz or 0) / 1e6:g} MHz; clock: {escape(tb.clock or 'analyzer')})"
        )
    elif tb is not None:
        console.print(f"[yellow]t = 0: {escape(tb.t0)}[/]")
    for line in _clock_lines(report):
        console.print(line, highlight=False)
    fit = report.clocks.printk
    if fit and "envelope" in fit.model:
        console.print(
            f"printk clock: mapped onto the host clock by the lower envelope of "
            f"{len(fit.anchors)} arrivals, ± {(fit.uncertainty_s or 0) * 1e3:.2f} ms"
        )
    elif fit:
        console.print(printk_fit(fit))
    tap = report.console.uart_tap if report.console else None
    if isinstance(tap, UartTap):
        how = "detected" if tap.baud_detected else "configured"
        console.print(
            f"UART tap: {tap.bytes} bytes at {tap.baud} baud ({how}), "
            f"{tap.lines_timed} lines timed on the analyzer clock"
        )
    elif tap:
        console.print(f"[yellow]UART tap failed: {escape(tap.error)}[/]")
    if report.not_cold and report.cold_boot is not None:
        why = "; ".join(report.cold_boot.reasons) or "flagged"
        console.print(f"[yellow]not a true cold boot (left out of statistics): {escape(why)}[/]")
    for line in _analysis_lines(report):
        console.print(line, highlight=False)
    if folder:
        console.print(f"artifacts: {escape(folder)}")
