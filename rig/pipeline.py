"""Analyze an artifact folder: read the artifacts, decode the capture, build and write
the report. This is all `rig analyze DIR` does, and what `rig run` does after capture."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rig import names
from rig.analysis.parsers.options import AnalysisOptions
from rig.analysis.report import build_report
from rig.artifacts import powerlog, rundir
from rig.artifacts.decode import channel_map, scan_markers
from rig.artifacts.fastscan import scan_capture
from rig.artifacts.srzip import read_info
from rig.artifacts.uart import UartBytes, UartError, decode_uart
from rig.artifacts.uartbin import UART_BIN, write_uart_bin
from rig.config import stages_from_snapshot
from rig.errors import InputError
from rig.model import Chunk, MarkerScan
from rig.sinks.html.write import write_html


def tapped_console(uart: UartBytes, power_on_ns: int, scan: MarkerScan) -> list[Chunk]:
    power = scan.power_up[0] if scan.power_up else 0
    to_ns = 1e9 / uart.samplerate
    return [
        Chunk(power_on_ns + int((int(s) - power) * to_ns), bytes([b]))
        for b, s in zip(uart.data, uart.start, strict=True)
    ]


def _run_or_bare(folder: Path) -> dict[str, Any]:
    if (folder / rundir.RUN).exists() or not (folder / rundir.CAPTURE).exists():
        return rundir.read_run(folder)
    # A bare capture with the DESIGN channel names needs no run.json and no config.
    return {"run_id": folder.name, "board": "unknown", "power_on_ns": 0, "started_utc": None}


ENGINES = ("fast", "sigrok")


def _scan(
    capture: Path,
    engine: str,
    debounce_us: float,
    baud: int | None,
    rename: Mapping[str, str] | None = None,
) -> tuple[MarkerScan, UartBytes | None, str | None]:
    """Markers and the tapped console. `sigrok` runs the bootmarkers decoder through
    sigrok-cli (the reference); `fast` scans the chunks with numpy, same results. The
    decoder needs a power channel: a capture without one is scanned by `fast` only."""
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {ENGINES}, found {engine!r}")
    channels = read_info(capture).channels
    if engine == "sigrok" and names.POWER in channel_map(channels, rename):
        scan = scan_markers(capture, debounce_us, rename=rename)
        by_name = {(rename or {}).get(c, c): c for c in reversed(channels)}
        tap = by_name.get(names.UART_TX)
        if tap is None:
            return scan, None, None
        try:
            return scan, decode_uart(capture, tap, baud), None
        except UartError as e:
            return scan, None, str(e)
    r = scan_capture(capture, debounce_us, names.UART_TX, baud, rename)
    return r.markers, r.uart, r.uart_error


def analyze_folder(
    folder: Path,
    write: bool = True,
    engine: str = "fast",
    rename: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """`rename` reads capture channels as contract names (`rig analyze --map TX=uart_tx`)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise rundir.ArtifactError(f"{folder}: not an artifact folder")
    run = _run_or_bare(folder)
    config = run.get("config") or {}
    analyzer = config.get("analyzer", {})
    # A bare capture has no config: its console rate is detected from the tap.
    console_baud = config.get("console", {}).get("baud")
    baud = int(console_baud or 115200)
    specs = stages_from_snapshot(config, folder / rundir.RUN)
    try:  # checked here so that a bad snapshot names run.json
        options = AnalysisOptions.from_mapping(config.get("analysis"), "config.analysis")
    except InputError as e:
        raise rundir.ArtifactError(f"{folder / rundir.RUN}: {e}") from None
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
        debounce = float(analyzer.get("debounce_us", 1000.0))
        scan, uart, uart_error = _scan(capture, engine, debounce, console_baud, rename)
        if uart is not None and write:
            write_uart_bin(folder / UART_BIN, uart)
        if uart is not None:
            artifacts["uart"] = UART_BIN
    if (folder / rundir.TRUTH).exists():
        artifacts["truth"] = rundir.TRUTH
    artifacts["report"] = rundir.REPORT
    if write:
        artifacts["html"] = rundir.REPORT_HTML
    if not chunks and uart is not None and scan is not None:
        # No host console (a bare capture): the tapped UART is the console, each byte
        # "arriving" at its start bit on the analyzer clock.
        chunks = tapped_console(uart, run["power_on_ns"], scan)

    power = powerlog.read(folder)  # a bench supply's readings, when it had one
    if power is not None:
        artifacts["power"] = powerlog.POWER_JSONL
    report = build_report(
        run, chunks, scan, specs, baud, artifacts, options, uart, uart_error, power
    )
    if rename and isinstance(report.get("capture"), dict):
        report["capture"]["channel_map"] = dict(rename)  # how this capture was read
    if write:
        rundir.write_json(folder / rundir.REPORT, report)
        write_html(folder)
    return report
