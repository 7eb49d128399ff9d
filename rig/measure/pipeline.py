"""Analyze an artifact folder: read the artifacts, decode the capture, build the report;
`rig analyze DIR`, and `rig run` after capture. The caller chooses where it goes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rig import names
from rig.analysis.report import BootArtifacts, build_report
from rig.artifacts import powerlog, rundir
from rig.artifacts.decode import contract_channels, scan_markers
from rig.artifacts.edges import scan_edges
from rig.artifacts.fastscan import scan_capture
from rig.artifacts.srzip import read_info
from rig.artifacts.uart import uart_from_edges
from rig.artifacts.uartbin import UART_BIN, write_uart_bin
from rig.config.snapshot import analysis_inputs
from rig.errors import ArtifactError
from rig.model import Chunk, MarkerScan, Report, Run
from rig.model.uart import UartBytes


def _run_or_bare(folder: Path) -> Run:
    if (folder / rundir.RUN).exists() or not (folder / rundir.CAPTURE).exists():
        return rundir.read_run(folder)
    # A bare capture with the contract's channel names (docs/contract.md) needs no
    # run.json and no config.
    return Run.bare(folder.name)


ENGINES = ("fast", "sigrok")


def _scan(
    capture: Path,
    engine: str,
    debounce_us: float,
    baud: int | None,
    rename: Mapping[str, str] | None = None,
) -> tuple[MarkerScan, UartBytes | None, str | None]:
    """Markers and the tapped console, by sigrok-cli (the reference) or `fast`; a
    capture without a power channel is scanned by `fast` only (the decoder needs one)."""
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {ENGINES}, found {engine!r}")
    found = contract_channels(read_info(capture).channels, rename, capture)
    if engine == "sigrok" and names.POWER in found:
        scan = scan_markers(capture, debounce_us, rename=rename)
        tap = found.get(names.UART_TX)
        if tap is None:
            return scan, None, None
        since = scan.power_up[0] if scan.power_up else 0  # this boot's bytes only
        edges = scan_edges(capture, [tap])  # a damaged capture is an error of the run's
        try:
            return scan, uart_from_edges(edges, tap, baud, since), None
        except ArtifactError as e:  # a line no UART rate fits: the report says so
            return scan, None, str(e)
    r = scan_capture(capture, debounce_us, names.UART_TX, baud, rename)
    return r.markers, r.uart, r.uart_error


def analyze_folder(
    folder: Path,
    write: bool = True,
    engine: str = "fast",
    rename: Mapping[str, str] | None = None,
) -> Report:
    """The folder's report. `write`: keep the tapped console's bytes (uart.bin) beside the
    capture. `rename` reads capture channels as contract names (`rig analyze --map
    TX=uart_tx`)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ArtifactError(f"{folder}: not an artifact folder")
    run = _run_or_bare(folder)
    inputs = analysis_inputs(run.config, folder / rundir.RUN)
    chunks = rundir.read_console(folder)

    artifacts = {"run": rundir.RUN}
    if (folder / rundir.CONSOLE_JSONL).exists():
        artifacts["console"] = rundir.CONSOLE_JSONL
    if (folder / rundir.CONSOLE_LOG).exists():
        artifacts["console_log"] = rundir.CONSOLE_LOG
    scan, uart, uart_error = None, None, None
    capture = folder / rundir.CAPTURE
    if capture.exists():
        artifacts["capture"] = rundir.CAPTURE
        scan, uart, uart_error = _scan(capture, engine, inputs.debounce_us, inputs.baud, rename)
        if uart is not None and write:
            write_uart_bin(folder / UART_BIN, uart)
        if uart is not None:
            artifacts["uart"] = UART_BIN
    if (folder / rundir.TRUTH).exists():
        artifacts["truth"] = rundir.TRUTH
    artifacts["report"] = rundir.REPORT
    if not chunks and uart is not None and scan is not None:
        # No host console (a bare capture): the tapped UART is the console, each byte
        # "arriving" at its start bit on the analyzer clock.
        up = scan.power_up[0] if scan.power_up else 0
        to_ns = 1e9 / uart.samplerate
        chunks = [
            Chunk(run.power_on_ns + int((int(s) - up) * to_ns), bytes([b]))
            for b, s in zip(uart.data, uart.start, strict=True)
        ]

    power = powerlog.read(folder)  # a bench supply's readings, when it had one
    if power is not None:
        artifacts["power"] = powerlog.POWER_JSONL
    hold = powerlog.read(folder, powerlog.HOLD_JSONL)  # the off-hold before the boot
    if hold is not None:
        artifacts["power_hold"] = powerlog.HOLD_JSONL
    boot = BootArtifacts(run, chunks, artifacts, scan, uart, uart_error, power, hold)
    report = build_report(boot, inputs.stages, inputs.console_baud, inputs.options)
    if rename and report.capture is not None:
        report.capture.channel_map = dict(rename)  # how this capture was read
    return report
