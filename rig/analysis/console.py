"""The console analysis in one call: the sections `build_report` adds to the report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.advice.context import Context
from rig.analysis.advisor import advise
from rig.analysis.events import Timebase
from rig.analysis.initcalls import async_waits, module_breakdown, pair_initcalls
from rig.analysis.lines import MAX_PARSED, Line, stand_in_reads
from rig.analysis.pacing import assess_pacing, band_slack, pacing_note, wire_char_s
from rig.analysis.parsers.console import parse_console
from rig.analysis.phases.build import build_phases
from rig.analysis.sections import (
    app_events,
    kernel_section,
    systemd_section,
    uboot_section,
)
from rig.analysis.silence import coverage, find_silences, unattributed
from rig.analysis.top import top_table
from rig.analysis.wire import ByteClock
from rig.model import Chunk, clocks, sections
from rig.model import report as model
from rig.model.options import AnalysisOptions
from rig.model.report import Initcall
from rig.model.sections import (
    AppEvent,
    KernelSection,
    ModuleTime,
    SystemdSection,
    UBootSection,
)
from rig.model.uart import UartBytes


def _notes(
    tb: Timebase, calls: Sequence[Initcall], baud: int, pacing: clocks.Pacing, lines: Sequence[Line]
) -> list[str]:
    notes = []
    if long := [ln for ln in lines if ln.overlong]:
        worst = max(long, key=lambda ln: len(ln.raw))
        notes.append(
            f"{len(long)} console line(s) longer than {MAX_PARSED} bytes (the longest: line "
            f"{worst.index}, {len(worst.raw)} bytes at byte offset {worst.offset}): line "
            "noise or a wrong baud rate; only their first bytes were parsed"
        )
    if tb.printk is None and any(c.source == "printk_relative" for c in calls):
        notes.append(
            "no printk clock fit (no stamped GPIO anchor, too few stamped lines): initcall "
            "start_s are printk-relative (seconds on the kernel clock), not from the power edge"
        )
    if baud <= 0:
        notes.append("baud unknown: console time is not subtracted from phases")
    if (note := pacing_note(pacing)) is not None:
        notes.append(note)
    return notes


@dataclass
class ConsoleAnalysis:
    """What the console gives a report (`build_report` places each part)."""

    initcalls: list[model.Initcall]
    modules: list[ModuleTime]
    top: list[model.TopItem]
    advisories: list[model.Advisory]
    uboot: UBootSection | None
    kernel: KernelSection | None
    systemd: SystemdSection | None
    app_events: list[AppEvent]
    phases: list[sections.Phase]
    unattributed: model.Unattributed
    pacing: clocks.Pacing
    notes: list[str]


def analyze_console(
    lines: Sequence[Line],
    tb: Timebase,
    baud: int,
    options: AnalysisOptions | None = None,
    chunks: Sequence[Chunk] | None = None,
    uart: UartBytes | None = None,
) -> ConsoleAnalysis:
    """Console lines (from `split_lines`), the time base, and the reads the lines came
    from (`chunks`, for byte times and pacing; `uart`: the tapped console) -> the
    report's console sections. Pure: the same inputs give the same sections."""
    opts = options or AnalysisOptions()
    reads = list(chunks) if chunks is not None else stand_in_reads(lines)
    # The time base's verdict; a hand-built one without it gets the same test here.
    pacing = tb.host.pacing or assess_pacing(
        reads, baud, band_slack(tb.host.high_s, tb.host.low_s), uart
    )
    char_s = wire_char_s(pacing)
    clock = ByteClock(lines, reads, tb, char_s, uart)
    parsed = parse_console(lines, opts.app_events)
    phases = build_phases(lines, parsed, tb, char_s, clock)
    calls = pair_initcalls(parsed.initcalls, lines, tb)
    modules = module_breakdown(calls)
    waits = async_waits(parsed.initcalls, lines, tb)
    silences = find_silences(lines, tb, clock, char_s)
    cover = coverage(lines, phases, calls, waits)
    rest = unattributed(lines, silences, cover, parsed, opts.silence_min_s)
    ctx = Context(lines, tb, baud, parsed, tuple(phases), tuple(calls), opts, pacing, reads)
    return ConsoleAnalysis(
        initcalls=calls,
        modules=modules,
        top=top_table(calls, modules, phases, waits, opts.top_n, rest.silences),
        advisories=advise(ctx),
        uboot=uboot_section(lines, parsed.uboot, phases, tb),
        kernel=kernel_section(lines, parsed.kernel, phases, waits, tb),
        systemd=systemd_section(lines, parsed.systemd, phases, tb),
        app_events=app_events(lines, parsed.app_events, tb),
        phases=phases,
        unattributed=rest,
        pacing=pacing,
        notes=_notes(tb, calls, baud, pacing, lines),
    )
