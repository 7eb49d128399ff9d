"""One measured power cycle: off, hold, arm, power on, read until UI ready, stop, save.

The cycle only records (artifacts); analysis happens afterwards from the files alone.
run.json is written before power-on and again at the end, so a crash in between still
leaves a folder that says what was attempted. Callers that run many cycles may hand in
work for the off-hold (`during_hold`) and an `abort` event that ends the wait early.
Progress is reported as steps (rig.steps), which run.json's `timing.steps` records.
"""

from __future__ import annotations

import contextvars
import re
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig import __version__, steps
from rig.analysis.evidence import PANIC_BYTES
from rig.artifacts import rundir
from rig.artifacts.leftovers import RunLock
from rig.artifacts.srzip import convert_binary
from rig.config.load import RigConfig
from rig.errors import InstrumentError, RigError
from rig.instruments.console_serial import SerialConsole
from rig.instruments.protocols import RawLayout
from rig.instruments.setup import Bench
from rig.instruments.target_claim import note_run
from rig.model import Chunk, Run
from rig.model.run import RunCapture, RunState, RunTiming
from rig.outcomes import Outcome

UI_TAG = b"bootrig: marker ui_ready"
#: After a panic the kernel still prints its reason and backtrace; keep reading this long.
PANIC_TAIL_S = 0.3
#: How often the wait for the boot looks at the abort event (it wakes at once on the tag).
_ABORT_POLL_S = 0.1
#: The title of the step that is one whole cycle.
CYCLE_STEP = "cycle"


@dataclass
class CycleResult:
    folder: Path
    run: Run
    ui_seen: bool


class _TagWatch:
    """Spots the ui_ready tag, or a kernel panic (no UI will come), in the console
    stream, also when split across chunks. `ui_lines`: the config's stand-ins for
    ui_ready, which a `quiet` kernel keeps off the console."""

    def __init__(self, ui_lines: tuple[re.Pattern[str], ...] = ()) -> None:
        self.seen = threading.Event()
        self.t_ns = 0
        self.panic = False
        self._tail = b""
        self._ui_lines = ui_lines
        self._line = b""  # the console's current line, for ui_lines

    def __call__(self, chunk: Chunk) -> None:
        buf = self._tail + chunk.data
        ui = UI_TAG in buf or self._ui_line(chunk.data)
        if not self.seen.is_set() and (ui or PANIC_BYTES in buf):
            self.panic = not ui
            self.t_ns = time.monotonic_ns()
            self.seen.set()
        self._tail = buf[-max(len(UI_TAG), len(PANIC_BYTES)) :]

    def _ui_line(self, data: bytes) -> bool:
        if not self._ui_lines:
            return False
        lines = (self._line + data).split(b"\n")
        self._line = lines[-1][-_LINE_MAX:]
        texts = [ln.decode("utf-8", "backslashreplace") for ln in lines]
        return any(p.search(t) for t in texts for p in self._ui_lines)


#: A line longer than this is not one a stand-in pattern is meant to match.
_LINE_MAX = 4096


def _ui_lines(cfg: RigConfig) -> tuple[re.Pattern[str], ...]:
    """The console patterns configured to stand in for the ui_ready marker."""
    ends = [s.end for s in cfg.stages if s.end.kind == "marker" and s.end.value == "ui_ready"]
    return tuple(re.compile(b.fallback) for b in ends if b.fallback)


def _stop_console(console: SerialConsole) -> Future[list[Chunk]]:
    """Stops the console reader in the background: its last blocking read may take up to
    one poll period to return, which the capture's stop and conversion can overlap."""
    done: Future[list[Chunk]] = Future()
    context = contextvars.copy_context()  # its step nests under "stop capture"

    def stop() -> None:
        try:
            done.set_result(context.run(console.stop))
        except BaseException as e:  # handed to the cycle's thread by result()
            done.set_exception(e)

    threading.Thread(target=stop, name="console-stop", daemon=True).start()
    return done


def _wait_for_ui(watch: _TagWatch, timeout_s: float, abort: threading.Event | None) -> bool:
    if abort is None:
        return watch.seen.wait(timeout_s)
    deadline = time.monotonic() + timeout_s
    while not abort.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        if watch.seen.wait(min(left, _ABORT_POLL_S)):
            return True
    return watch.seen.is_set()


def _stop_capture(bench: Bench, run: Run, folder: Path, raw: Path, defer: bool) -> list[Chunk]:
    """Stop the console and the analyzer together; convert the capture meanwhile, or
    (`defer`) leave the raw file for the caller to convert during the next off-hold."""
    stopper = _stop_console(bench.console)
    if bench.analyzer:
        try:
            res = bench.analyzer.stop()
            run.analyzer_stopped_ns = res.stopped_ns
            lay = bench.analyzer.layout
            run.capture = cap = _layout(lay)
            cap.samples, cap.samplerate_hz = res.samples, res.samplerate
            cap.clock, cap.device_stop_s = res.clock, res.device_stop_s
            if defer:  # run.json states the layout: recover_folder converts it later
                cap.deferred = True
                return stopper.result()
        except (InstrumentError, OSError) as e:
            run.rig_error = Outcome.ANALYZER_ERROR.value
            run.analyzer_error = str(e)
            return stopper.result()
        bits = lay.bits if lay.repack else None
        try:
            with steps.step("analyzer convert", samples=res.samples):
                n = convert_binary(
                    raw, folder / rundir.CAPTURE, lay.names, res.samplerate, lay.unitsize, bits
                )
        except OSError as e:  # the disk, not the analyzer: the raw samples are whole
            run.disk_error(f"capture.sr not written ({e}); the samples are kept in "
                           "capture.bin, converted by the next rig run or rig analyze")  # fmt: skip
            cap.deferred = True
            return stopper.result()
        cap.samples = n
        raw.unlink()
    return stopper.result()


def _arm(bench: Bench, run: Run, raw: Path) -> None:
    assert bench.analyzer is not None
    # The layout before power-on: a raw capture a killed run leaves can be converted.
    run.capture = _layout(bench.analyzer.layout)
    run.capture.samplerate_hz = bench.analyzer.samplerate
    run.analyzer_armed_ns = bench.analyzer.arm(raw)


def _layout(lay: RawLayout) -> RunCapture:
    return RunCapture(
        channels=list(lay.names),
        unitsize=lay.unitsize,
        raw_bits=list(lay.bits) if lay.repack else None,
    )


def run_cycle(
    cfg: RigConfig,
    bench: Bench,
    *,
    run_id: str | None = None,
    during_hold: Callable[[], None] | None = None,
    abort: threading.Event | None = None,
    defer_conversion: bool = False,
) -> CycleResult:
    """One cycle as one step; the steps inside it are recorded for run.json."""
    with (
        steps.step(CYCLE_STEP, source=bench) as cycle,
        steps.subscribed(steps.Recorder(cycle)) as times,
    ):
        if run_id is None:
            run_id, folder = rundir.new_run_folder(cfg.results_dir)
        else:
            folder = cfg.results_dir / run_id
            folder.mkdir(parents=True)
        lock = RunLock(folder)  # tells a later rig that a raw capture here is not a leftover
        note_run(folder)  # a second rig refused this board is told where we measure
        t_start = time.monotonic_ns()
        instruments: dict[str, Any] = {
            "power": type(bench.power).__name__,
            "console": bench.console.port,
            "analyzer": type(bench.analyzer).__name__ if bench.analyzer else None,
        }
        run = Run(
            run_id=run_id,
            rig=cfg.rig,
            board=cfg.board,
            variant=cfg.variant,
            started_utc=rundir.utc_now(),
            state=RunState.RUNNING,  # replaced when the cycle ends: a crash leaves it said
            host=socket.gethostname(),
            rig_version=__version__,
            config_file=cfg.path.name,
            config=cfg.snapshot(),
            instruments=instruments,
            place=bench.place,
            power_on_ns=t_start,  # until the power-on command
        )
        for role, inst in (("power", bench.power), ("analyzer", bench.analyzer)):
            describe = getattr(inst, "describe", None)
            if describe is not None:
                instruments[f"{role}_device"] = describe()  # what answered, for the record

        raw = folder / rundir.CAPTURE_RAW
        early = bench.analyzer is not None and cfg.analyzer.arm_before_off
        if early:  # the capture then shows the rail fall and the off-time (docs/cold-boot.md)
            _arm(bench, run, raw)
            rundir.write_run(folder, run)  # states the layout, should the run die in the hold
        t_off_cmd = time.monotonic_ns()
        run.rail_off_since_ns = bench.off_since_ns  # off since the previous cycle's end
        run.power_off_ns = bench.power.off()  # the off-hold's start: docs/cold-boot.md
        t_off = time.monotonic_ns()
        with steps.step("off-hold", hold_s=cfg.power.off_hold_s):
            if during_hold is not None:
                with steps.step("hold work"):
                    during_hold()  # the board is unpowered anyway: the hold absorbs this work
            t_work = time.monotonic_ns()
            left_s = cfg.power.off_hold_s - (t_work - t_off) / 1e9
            if left_s > 0:
                time.sleep(left_s)
        t_hold_end = time.monotonic_ns()

        if bench.analyzer and not early:
            _arm(bench, run, raw)
        watch = _TagWatch(_ui_lines(cfg))
        bench.console.start(folder / rundir.CONSOLE_JSONL, watch)
        instruments["console"] = bench.console.port  # an emulated board's pty is new
        run.power_on_ns = time.monotonic_ns()  # replaced by the relay's own stamp below
        rundir.write_run(folder, run)

        bench.off_since_ns = None
        run.power_on_ns = bench.power.on()
        run.power_on_utc = rundir.utc_now()  # wall-clock twin of power_on_ns, for sinks
        with steps.step("wait for UI ready", timeout_s=cfg.boot_timeout_s):
            ended = _wait_for_ui(watch, cfg.boot_timeout_s, abort)
        ui_seen = ended and not watch.panic
        t_boot_end = watch.t_ns if ended else time.monotonic_ns()
        if ui_seen:
            time.sleep(cfg.post_ui_s)  # the tail of the console after the tag
        elif ended:
            run.panic_seen_ns = watch.t_ns
            time.sleep(PANIC_TAIL_S)
        elif abort is not None and abort.is_set():
            run.aborted = True  # stopped by the operator: not a measurement of the boot

        with steps.step("stop capture"):
            chunks = _stop_capture(bench, run, folder, raw, defer_conversion)
        if write_error := getattr(bench.console, "write_error", None):
            kept = getattr(bench.console, "unwritten_from", None) or 0
            lost = chunks[kept:]
            n_bytes = sum(len(c.data) for c in lost)
            run.disk_error(
                f"{write_error}: the console's last {len(lost)} reads ({n_bytes} bytes) "
                "are not in console.jsonl",
            )
        run.console_reader = bench.console.reader_check  # how late its stamps can be
        if bench.console.error:
            # The port died (adapter unplugged, pty closed): with no UI tag seen before
            # (timing.ui_ready_seen_ns null) the analysis files the boot as console_lost
            # (rig.analysis.evidence); the capture still shows the boot.
            run.console_error = bench.console.error
        try:
            instruments.update(bench.power.artifacts(folder))
        except OSError as e:
            run.power_artifacts_error = f"{folder}: {e.strerror or e}"
        if cfg.power.power_off_after:
            bench.off_since_ns = bench.power.off()
        try:
            rundir.write_console_log(folder, chunks)
        except OSError as e:  # a readable copy of console.jsonl: the run goes on without it
            run.disk_error(f"console.log not written ({e})")

        t_end = time.monotonic_ns()
        wall = (t_end - t_start) / 1e9
        # The hold is the configured time after the off command; work done during it that
        # outlasted it is the rig's overhead, not the board's hold.
        # An early arming is the rig's time too, so the hold starts at the off command.
        hold = (t_off - t_off_cmd) / 1e9 + min(cfg.power.off_hold_s, (t_hold_end - t_off) / 1e9)
        boot = (t_boot_end - run.power_on_ns) / 1e9
        run.timing = RunTiming(
            wall_s=wall,
            off_hold_s=hold,
            boot_s=boot,
            overhead_s=wall - hold - boot,
            hold_work_s=(t_work - t_off) / 1e9,
            ui_ready_seen_ns=watch.t_ns if ui_seen else None,
            # Steps finished so far (the cycle's own is wall_s), from the power-on command.
            steps=times.to_model(run.power_on_ns),
        )
        run.completed_utc = rundir.utc_now()
        run.state = RunState.INTERRUPTED if run.aborted else RunState.COMPLETE
        try:
            rundir.write_run(folder, run)
        except OSError as e:
            # The run.json written before power-on stays: its state "running" makes `rig
            # analyze` file the run as the rig's failure, never as a boot.
            raise RigError(
                f"disk: {e}; the run's artifacts in {folder} are kept ({kept_files(folder)}): "
                f"`rig analyze {folder}` reports it as rig_error"
            ) from None
        lock.release()
        return CycleResult(folder, run, ui_seen)


def kept_files(folder: Path) -> str:
    """What a failed run left in its folder, for the message that says so."""
    try:
        return ", ".join(sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")))
    except OSError:
        return "unreadable"
