"""The stage table people read in the terminal (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rig.model.report import Report, Stage


def fmt_s(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:.6f}"


def fmt_u(v: float | None) -> str:
    if v is None:
        return "—"
    if v < 1e-3:
        return f"± {v * 1e6:.1f} µs"
    return f"± {v * 1e3:.2f} ms"


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
    t = Table(title=title, title_justify="left")
    t.add_column("stage")
    t.add_column("start (s)", justify="right")
    t.add_column("duration (s)", justify="right")
    t.add_column("source")
    t.add_column("uncertainty", justify="right")
    for s in report.stages:
        t.add_row(
            escape(s.name),
            fmt_s(s.start_s),
            fmt_s(s.duration_s),
            escape(_source(s)),
            fmt_u(s.uncertainty_s),
        )
    t.add_section()
    t.add_row(
        "[bold]power_to_ui[/]",
        fmt_s(0.0 if report.power_to_ui_s is not None else None),
        f"[bold]{fmt_s(report.power_to_ui_s)}[/]",
        "",
        fmt_u(report.power_to_ui_uncertainty_s),
    )
    return t


def top_table(report: Report, n: int = 10) -> Table:
    t = Table(title="where is the time going", title_justify="left")
    t.add_column("#", justify="right")
    t.add_column("in")  # the software that spent it (bootloader, kernel, userspace)
    t.add_column("what")
    t.add_column("start (s)", justify="right")
    t.add_column("duration (s)", justify="right")
    t.add_column("source")
    for row in report.top[:n]:
        name = escape(row.name)
        if row.kind == "unattributed":  # time no evidence explains: say so
            name = f"[dim]unattributed[/] {name}"
        t.add_row(
            str(row.rank),
            escape(row.stage or ""),
            name,
            fmt_s(row.start_s),
            fmt_s(row.duration_s),
            escape(row.source or ""),
        )
    return t


def advice_table(report: Report) -> Table:
    # The advice text itself is long; report.json and report.html carry it.
    t = Table(title="advice (details in report.json)", title_justify="left")
    t.add_column("gain (s)", justify="right")
    t.add_column("how sure")
    t.add_column("rule")
    t.add_column("finding")
    for a in report.advisories:
        t.add_row(
            fmt_s(a.gain_s),
            escape(a.gain_kind or ""),
            escape(a.rule),
            escape(a.title),
        )
    return t


def print_report(report: Report, console: Console, folder: str | None = None) -> None:
    console.print(stage_table(report))
    if report.top:
        console.print(top_table(report))
    if report.advisories:
        console.print(advice_table(report))
    tb = report.time_base
    if tb is None:
        pass
    elif tb.reference == "analyzer" and tb.power_edge_sample is None:
        console.print(f"[yellow]t = 0: {escape(tb.t0)}[/]")
    elif tb.reference == "analyzer":
        console.print(
            f"t = 0: {escape(tb.t0)} (sample {tb.power_edge_sample} at "
            f"{(tb.samplerate_hz or 0) / 1e6:g} MHz; clock: {escape(tb.clock or 'analyzer')})"
        )
    else:
        console.print(f"[yellow]t = 0: {escape(tb.t0)}[/]")
    fit = report.clocks.get("printk")
    if fit and "envelope" in fit["model"]:
        console.print(
            f"printk clock: mapped onto the host clock by the lower envelope of "
            f"{len(fit['anchors'])} arrivals, ± {fit['uncertainty_s'] * 1e3:.2f} ms"
        )
    elif fit:
        console.print(
            f"printk clock: {len(fit['anchors'])} anchors, drift {fit['drift_ppm']:+.1f} ppm, "
            f"rms residual {fit['rms_residual_s'] * 1e6:.1f} µs"
        )
    tap = report.console.uart_tap if report.console else None
    if tap and "bytes" in tap:
        how = "detected" if tap["baud_detected"] else "configured"
        console.print(
            f"UART tap: {tap['bytes']} bytes at {tap['baud']} baud ({how}), "
            f"{tap['lines_timed']} lines timed on the analyzer clock"
        )
    elif tap:
        console.print(f"[yellow]UART tap failed: {escape(str(tap['error']))}[/]")
    if report.not_cold and report.cold_boot is not None:
        why = "; ".join(report.cold_boot.reasons) or "flagged"
        console.print(f"[yellow]not a true cold boot (left out of statistics): {escape(why)}[/]")
    if folder:
        console.print(f"artifacts: {escape(folder)}")
