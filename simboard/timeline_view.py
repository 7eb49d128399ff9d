"""Present a planned boot (`rig sim timeline`): a rich table or a JSON object."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from rig.commands.common import console
from simboard.profile import Profile
from simboard.timeline import Timeline


def as_dict(profile: Profile, tl: Timeline, with_lines: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "profile": str(profile.path),
        "board": profile.board.name,
        "variant": profile.board.variant,
        "seed": tl.seed,
        "boot_index": tl.boot_index,
        "stages": [s.as_dict() for s in tl.stages],
        "power_to_ui_s": tl.stages[-1].end_s if tl.halted is None else None,
        "halted": tl.halted,
        "markers": tl.markers,
        "kernel_clock": {
            "start_s": tl.kernel_start_s,
            "offset_s": tl.offset_s,
            "drift_ppm": tl.drift_ppm,
        },
        "line_count": len(tl.lines),
        "console_bytes": len(tl.data),
        "console_s": len(tl.data) * tl.byte_s,
        "end_s": tl.end_s,
    }
    if with_lines:
        out["lines"] = [
            {
                "text": ln.text,
                "t_s": ln.t_s,
                "event_s": ln.event_s,
                "printk_ts": ln.printk_ts,
                "bytes": ln.offset,
            }
            for ln in tl.lines
        ]
    return out


def print_timeline(profile: Profile, tl: Timeline, with_lines: bool) -> None:
    b = profile.board
    title = f"{b.name} ({b.variant}): boot {tl.boot_index}, seed {tl.seed}"
    table = Table(title=title, title_justify="left")
    for col in ("stage", "start s", "end s", "duration s", "nominal s", "factor"):
        table.add_column(col, justify="left" if col == "stage" else "right")
    for s in tl.stages:
        table.add_row(
            s.name,
            f"{s.start_s:.6f}",
            f"{s.end_s:.6f}",
            f"{s.duration_s:.6f}",
            f"{s.nominal_s:.3f}",
            f"{s.factor:.4f}",
        )
    if tl.halted is None:
        total = tl.stages[-1].end_s
        nominal = sum(s.nominal_s for s in tl.stages)
        table.add_row("[bold]power-to-UI", "", "", f"[bold]{total:.6f}", f"{nominal:.3f}", "")
    console.print(table)
    marks = Table(title="markers (GPIO toggle)", title_justify="left")
    marks.add_column("marker")
    marks.add_column("t s", justify="right")
    for name, t in tl.markers.items():
        marks.add_row(name, f"{t:.6f}")
    console.print(marks)
    kernel = (
        f"kernel clock starts at {tl.kernel_start_s:.6f} s"
        if tl.kernel_start_s is not None
        else "the kernel never starts"
    )
    console.print(
        f"console: {len(tl.lines)} lines, {len(tl.data)} bytes at {tl.baud} baud "
        f"({len(tl.data) * tl.byte_s:.3f} s on the wire); {kernel}, "
        f"drift {tl.drift_ppm:g} ppm, offset {tl.offset_s:g} s",
        highlight=False,
    )
    if tl.halted:
        console.print(f"[bold red]boot halted ({tl.halted}) at {tl.end_s:.6f} s[/]")
    if with_lines:
        lines = Table(title="console lines", title_justify="left")
        for col in ("t s", "printk ts", "text"):
            lines.add_column(col, justify="left" if col == "text" else "right")
        for ln in tl.lines:
            ts = f"{ln.printk_ts:.6f}" if ln.printk_ts is not None else ""
            lines.add_row(f"{ln.t_s:.6f}", ts, escape(repr(ln.text)[1:-1]))
        console.print(lines)
