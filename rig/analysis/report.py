"""Assemble the `Report` (report.json, schema bootrig.report/1) from analyzed parts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rig import __version__, names
from rig.analysis import reset, validity
from rig.analysis.coldboot import assess
from rig.analysis.console import analyze_console
from rig.analysis.energy import add_energy
from rig.analysis.events import (
    Timebase,
    build_timebase,
    gpio_times,
    interval_uncertainty,
    line_event,
    marker_events,
)
from rig.analysis.evidence import ConsoleRecord
from rig.analysis.lines import Line, split_lines
from rig.analysis.outcome import classify
from rig.analysis.stages import build_stages, stage_notes
from rig.model import Chunk, MarkerScan, Run
from rig.model.capture import PowerReading
from rig.model.clocks import Clocks, UartTap, UartTapFailed
from rig.model.options import AnalysisOptions
from rig.model.report import (
    AnalysisInfo,
    CaptureSummary,
    ConsoleSummary,
    ConsoleTime,
    Report,
    TimeBase,
)
from rig.model.stagespec import StageSpec
from rig.model.uart import UartBytes
from rig.outcomes import Outcome


def _tap(uart: UartBytes | None, error: str | None, matched: int) -> UartTap | UartTapFailed | None:
    """What the UART tap contributed: None when the capture has no uart_tx channel."""
    if uart is None:
        return UartTapFailed(error) if error else None
    return UartTap(len(uart.data), uart.baud, uart.baud_detected, uart.frame_errors, matched)


@dataclass(frozen=True)
class BootArtifacts:
    """What one boot left, read: the run, the console's reads, the capture's markers
    and tapped UART (or why the tap gave nothing), a supply's readings (power.jsonl,
    which give each stage its energy; power_hold.jsonl, the off-hold before the boot),
    and the files present (the report's `artifacts`)."""

    run: Run
    chunks: Sequence[Chunk]
    files: dict[str, str]
    scan: MarkerScan | None = None
    uart: UartBytes | None = None
    uart_error: str | None = None
    power: Sequence[PowerReading] | None = None
    power_hold: Sequence[PowerReading] | None = None


def build_report(
    boot: BootArtifacts,
    specs: tuple[StageSpec, ...],
    baud: int,
    analysis: AnalysisOptions | None = None,
) -> Report:
    """Everything in the report follows from the arguments: the same artifacts give the
    same report, byte for byte."""
    run, artifacts = boot.run, boot.files
    uart, uart_error, power = boot.uart, boot.uart_error, boot.power
    power_on_ns = run.power_on_ns

    def timebase(scan: MarkerScan | None, lines: list[Line], chunks: Sequence[Chunk]) -> Timebase:
        return build_timebase(scan, lines, power_on_ns, baud, uart, chunks, run.console_reader)

    # A board that started again is timed on its first boot's share of the artifacts.
    all_lines = split_lines(boot.chunks)
    share = reset.cut(all_lines, boot.chunks, boot.scan, timebase)
    lines, chunks, scan = share.lines, share.chunks, share.scan
    tb = timebase(scan, lines, chunks)
    events = marker_events(lines, tb, _command_s(run))
    opts = analysis or AnalysisOptions()
    console = analyze_console(lines, tb, baud, opts, chunks, uart)
    stages, landmarks = build_stages(specs, events, lines, tb)
    # What stood in for a missing hook (a landmark, a configured pattern) is an event too.
    seen = {id(e) for e in events}
    for ev in (x for s in stages for x in (s.start, s.end) if x is not None):
        if id(ev) not in seen:
            seen.add(id(ev))
            events.append(ev)
    gpio = gpio_times(scan, tb.power_sample) if scan and tb.power_sample is not None else {}
    invalid = validity.run_problems(run, "capture" in artifacts)
    invalid += validity.problems(boot.chunks, lines, power_on_ns, scan, gpio, uart, stages)
    rig_error = run.rig_error
    # The cycle files an analyzer's failure under `analyzer_error`, the soak any other.
    detail = run.rig_error_detail or run.analyzer_error
    if not rig_error and (why := validity.unfinished(run)):
        rig_error, detail = Outcome.RIG_ERROR, why
    console_record = ConsoleRecord.of_run(run, "console" in artifacts)
    outcome = classify(
        scan, "capture" in artifacts, lines, stages, rig_error,
        run.interrupted, invalid[0] if invalid else None, console_record, share.reset,
    )  # fmt: skip
    reset_info = reset.describe(share, all_lines, tb, stages) if share.reset else None

    first, last = (stages[0].start, stages[-1].end) if stages else (None, None)
    total = (last.t_s - first.t_s) if first and last else None
    total_u = interval_uncertainty(first, last) if first and last else None

    if tb.reference == "analyzer":
        time_base = TimeBase(
            reference="analyzer",
            t0=_t0(scan, tb.power_sample),
            clock=(run.capture.clock if run.capture else None) or "analyzer sample clock",
            samplerate_hz=tb.samplerate or (scan.samplerate if scan else None),
            power_edge_sample=tb.power_sample,
        )
    else:
        time_base = TimeBase(
            reference="host",
            t0="stamp right before the power-on command (host CLOCK_MONOTONIC), no analyzer "
            "capture; the rail rose after it, within the power event's rail_within_s",
            power_on_ns=run.power_on_ns,
        )
    report = Report(
        run_id=run.run_id,
        rig=run.rig,
        board=run.board,
        variant=run.variant,
        place=run.place.name if run.place else None,
        started_utc=run.started_utc,
        power_on_utc=run.power_on_utc,
        outcome=str(outcome),
        power_to_ui_s=total,
        power_to_ui_uncertainty_s=total_u,
        stages=[s.to_model() for s in stages],
        events=sorted(events, key=lambda e: (e.t_s, e.name)),
        time_base=time_base,
        clocks=Clocks(tb.host.to_model(), tb.printk.to_model() if tb.printk else None),
        console=ConsoleSummary(
            lines=len(all_lines),
            bytes=sum(len(c.data) for c in boot.chunks),
            chunks=len(boot.chunks),
            baud=baud,
            uart_tap=_tap(uart, uart_error, len(tb.uart)),
            pacing=console.pacing,
        ),
        capture=_capture(boot.scan),
        console_times=[
            ConsoleTime(ln.index, e.t_s, e.source, e.uncertainty_s)
            for ln in lines
            for e in [line_event("", ln, tb)]
        ],
        initcalls=console.initcalls,
        modules=console.modules,
        top=console.top,
        advisories=console.advisories,
        uboot=console.uboot,
        kernel=console.kernel,
        systemd=console.systemd,
        app_events=console.app_events,
        phases=console.phases,
        unattributed=console.unattributed,
        artifacts=artifacts,
        analysis=AnalysisInfo(
            rig_version=__version__,
            notes=console.notes
            + stage_notes(stages)
            + _console_note(console_record)
            + ([reset.note(reset_info)] if reset_info else []),
            invalid=invalid,  # contradictions in the artifacts (outcome invalid_artifacts)
            rig_error=(detail or rig_error) if rig_error else None,  # what failed, if it did
            landmarks=landmarks,
        ),
    )
    if power:
        add_energy(report, power_on_ns, power, tb.host)
    report.reset = reset_info
    report.cold_boot = assess(
        run, boot.scan, tb.power_sample, power, boot.power_hold, opts.min_off_s, opts.rail_off_v
    )
    return report


def _command_s(run: Run) -> float | None:
    """When the power-on command returned, from its stamp (run.json `timing.steps`;
    None when the recorder wrote none)."""
    steps = run.timing.steps if run.timing else None
    ons = [s for s in steps or () if s.title == names.POWER_ON_STEP and s.duration_s is not None]
    if not ons:
        return None
    on = min(ons, key=lambda s: abs(s.start_s))  # the one power_on_ns stamps
    assert on.duration_s is not None
    return on.start_s + on.duration_s


def _capture(scan: MarkerScan | None) -> CaptureSummary | None:
    if scan is None:
        return None
    return CaptureSummary(
        samples=scan.samples,
        samplerate_hz=scan.samplerate,
        channels=list(scan.channels),
        power_ups=len(scan.power_up),
        bounces_rejected=scan.bounces,
        dense_channels=dict(scan.dense),  # not decoded: floating or mis-mapped
        engine=scan.engine,
    )


def _console_note(console: ConsoleRecord) -> list[str]:
    note = console.note()
    return [note] if note else []


def _t0(scan: MarkerScan | None, power_sample: int | None) -> str:
    if scan is not None and not scan.power_channel:
        return "first sample of the capture (it has no power channel)"
    if power_sample is None:
        return "none: the capture has no power-up edge, so no time is measured"
    return "debounced rising edge of the power channel"
