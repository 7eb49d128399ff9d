"""The stage table people read in the terminal (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


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


def _source(stage: dict[str, Any]) -> str:
    """The stage's source, with the note on a boundary that had no hook of its own (a
    landmark, an initramfs boot's missing root mount, a tag hidden by quiet)."""
    src = stage.get("source") or ""
    extra = [n for n in (stage.get("note") or "").split("; ") if n and n not in src.split("+")]
    if src and extra:
        return f"{src} ({'; '.join(extra)})"
    return src or "; ".join(extra) or "not reached"


def stage_table(report: dict[str, Any]) -> Table:
    title = (
        f"{escape(str(report['board']))} / {escape(str(report.get('variant') or '-'))}"
        f"  ·  run {escape(str(report['run_id']))}"
        f"  ·  outcome [bold]{escape(str(report['outcome']))}[/]"
    )
    t = Table(title=title, title_justify="left")
    t.add_column("stage")
    t.add_column("start (s)", justify="right")
    t.add_column("duration (s)", justify="right")
    t.add_column("source")
    t.add_column("uncertainty", justify="right")
    for s in report["stages"]:
        t.add_row(
            escape(s["name"]),
            fmt_s(s["start_s"]),
            fmt_s(s["duration_s"]),
            escape(_source(s)),
            fmt_u(s["uncertainty_s"]),
        )
    t.add_section()
    t.add_row(
        "[bold]power_to_ui[/]",
        fmt_s(0.0 if report["power_to_ui_s"] is not None else None),
        f"[bold]{fmt_s(report['power_to_ui_s'])}[/]",
        "",
        fmt_u(report.get("power_to_ui_uncertainty_s")),
    )
    return t


def top_table(report: dict[str, Any], n: int = 10) -> Table:
    t = Table(title="where is the time going", title_justify="left")
    t.add_column("#", justify="right")
    t.add_column("in")  # the software that spent it (bootloader, kernel, userspace)
    t.add_column("what")
    t.add_column("start (s)", justify="right")
    t.add_column("duration (s)", justify="right")
    t.add_column("source")
    for row in report.get("top", [])[:n]:
        name = escape(row["name"])
        if row.get("kind") == "unattributed":  # time no evidence explains: say so
            name = f"[dim]unattributed[/] {name}"
        t.add_row(
            str(row["rank"]),
            escape(row.get("stage") or ""),
            name,
            fmt_s(row.get("start_s")),
            fmt_s(row["duration_s"]),
            escape(row.get("source") or ""),
        )
    return t


def advice_table(report: dict[str, Any]) -> Table:
    # The advice text itself is long; report.json and report.html carry it.
    t = Table(title="advice (details in report.json)", title_justify="left")
    t.add_column("gain (s)", justify="right")
    t.add_column("how sure")
    t.add_column("rule")
    t.add_column("finding")
    for a in report.get("advisories", []):
        t.add_row(
            fmt_s(a["gain_s"]),
            escape(a.get("gain_kind", "")),
            escape(a["rule"]),
            escape(a["title"]),
        )
    return t


def print_report(report: dict[str, Any], console: Console, folder: str | None = None) -> None:
    console.print(stage_table(report))
    if report.get("top"):
        console.print(top_table(report))
    if report.get("advisories"):
        console.print(advice_table(report))
    tb = report["time_base"]
    if tb["reference"] == "analyzer" and tb.get("power_edge_sample") is None:
        console.print(f"[yellow]t = 0: {escape(tb['t0'])}[/]")
    elif tb["reference"] == "analyzer":
        console.print(
            f"t = 0: {escape(tb['t0'])} (sample {tb['power_edge_sample']} at "
            f"{tb['samplerate_hz'] / 1e6:g} MHz; clock: {escape(tb.get('clock', 'analyzer'))})"
        )
    else:
        console.print(f"[yellow]t = 0: {escape(tb['t0'])}[/]")
    fit = report["clocks"].get("printk")
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
    tap = report.get("console", {}).get("uart_tap")
    if tap and "bytes" in tap:
        how = "detected" if tap["baud_detected"] else "configured"
        console.print(
            f"UART tap: {tap['bytes']} bytes at {tap['baud']} baud ({how}), "
            f"{tap['lines_timed']} lines timed on the analyzer clock"
        )
    elif tap:
        console.print(f"[yellow]UART tap failed: {escape(str(tap['error']))}[/]")
    if folder:
        console.print(f"artifacts: {escape(folder)}")
