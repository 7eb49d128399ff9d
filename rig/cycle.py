"""One measured power cycle: off, hold, arm, power on, read until UI ready, stop, save.

The cycle only records (artifacts); analysis happens afterwards from the files alone.
run.json is written before power-on and again at the end, so a crash in between still
leaves a folder that says what was attempted.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig import __version__, names
from rig.artifacts import rundir
from rig.artifacts.srzip import convert_binary
from rig.config import RigConfig
from rig.instruments.protocols import InstrumentError
from rig.instruments.setup import Bench
from rig.model import Chunk

UI_TAG = b"bootrig: marker ui_ready"

Step = Callable[[str], None]


@dataclass
class CycleResult:
    folder: Path
    run: dict[str, Any]
    ui_seen: bool


class _TagWatch:
    """Spots the ui_ready tag in the console stream, also when split across chunks."""

    def __init__(self) -> None:
        self.seen = threading.Event()
        self.t_ns = 0
        self._tail = b""

    def __call__(self, chunk: Chunk) -> None:
        buf = self._tail + chunk.data
        if not self.seen.is_set() and UI_TAG in buf:
            self.t_ns = time.monotonic_ns()
            self.seen.set()
        self._tail = buf[-len(UI_TAG) :]


def _channel_names(cfg: RigConfig) -> list[str]:
    by_index = {i: n for n, i in cfg.analyzer.channels.items()}
    return [by_index.get(i, f"D{i}") for i in range(8)]


def run_cycle(cfg: RigConfig, bench: Bench, step: Step = lambda _s: None) -> CycleResult:
    run_id = rundir.new_run_id()
    folder = cfg.results_dir / run_id
    folder.mkdir(parents=True)
    t_start = time.monotonic_ns()
    run: dict[str, Any] = {
        "schema": names.RUN_SCHEMA,
        "run_id": run_id,
        "rig": cfg.rig,
        "board": cfg.board,
        "variant": cfg.variant,
        "started_utc": rundir.utc_now(),
        "host": socket.gethostname(),
        "rig_version": __version__,
        "config_file": cfg.path.name,
        "config": cfg.snapshot(),
        "instruments": {
            "power": type(bench.power).__name__,
            "console": bench.console.port,
            "analyzer": type(bench.analyzer).__name__ if bench.analyzer else None,
        },
    }

    step("power off")
    bench.power.off()
    time.sleep(cfg.power.off_hold_s)
    t_hold_end = time.monotonic_ns()

    raw = folder / rundir.CAPTURE_RAW
    if bench.analyzer:
        step("arm analyzer")
        run["analyzer_armed_ns"] = bench.analyzer.arm(raw)
    watch = _TagWatch()
    bench.console.start(folder / rundir.CONSOLE_JSONL, watch)
    run["power_on_ns"] = time.monotonic_ns()  # replaced by the relay's own stamp below
    rundir.write_json(folder / rundir.RUN, run)

    step("power on")
    run["power_on_ns"] = bench.power.on()
    run["power_on_utc"] = rundir.utc_now()  # wall-clock twin of power_on_ns, for sinks
    step("booting")
    ui_seen = watch.seen.wait(cfg.boot_timeout_s)
    t_boot_end = watch.t_ns if ui_seen else time.monotonic_ns()
    if ui_seen:
        time.sleep(cfg.post_ui_s)  # the tail of the console after the tag

    step("stop capture")
    chunks = bench.console.stop()
    if bench.console.error:
        run["console_error"] = bench.console.error
    if bench.analyzer:
        try:
            res = bench.analyzer.stop()
            run["analyzer_stopped_ns"] = res.stopped_ns
            run["capture"] = {"samples": res.samples, "samplerate_hz": res.samplerate}
            convert_binary(raw, folder / rundir.CAPTURE, _channel_names(cfg), res.samplerate)
            raw.unlink()
        except (InstrumentError, OSError) as e:
            run["rig_error"] = "analyzer_error"
            run["analyzer_error"] = str(e)
    if cfg.power.power_off_after:
        bench.power.off()
    rundir.write_console_log(folder, chunks)

    t_end = time.monotonic_ns()
    wall = (t_end - t_start) / 1e9
    hold = (t_hold_end - t_start) / 1e9
    boot = (t_boot_end - run["power_on_ns"]) / 1e9
    run["timing"] = {
        "wall_s": wall,
        "off_hold_s": hold,
        "boot_s": boot,
        "overhead_s": wall - hold - boot,
        "ui_ready_seen_ns": watch.t_ns if ui_seen else None,
    }
    run["completed_utc"] = rundir.utc_now()
    rundir.write_json(folder / rundir.RUN, run)
    return CycleResult(folder, run, ui_seen)
