"""The QEMU board's drivers: power through QMP, the analyzer from QEMU's PL061 trace,
the console on the PL011 pty that each power-on creates anew."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rig import names
from rig.config.tomlcheck import Table
from rig.errors import ArtifactError, InstrumentError
from rig.instruments.console_serial import SerialConsole
from rig.instruments.protocols import AnalyzerProtocol, CaptureResult, PowerProtocol, byte_layout
from rig.instruments.qemu.machine import QemuMachine
from rig.instruments.qemu.settings import CAPTURE_CHANNELS
from rig.instruments.qemu.trace import parse_trace
from rig.instruments.registry import ANALYZER, CONSOLE, POWER, BenchContext
from rig.model import Chunk
from rig.steps import as_step

TRACE_FILE = "qemu-trace.log"
TRACE_CLOCK = "QEMU host wall clock (pl061_set_output trace and QMP RESUME stamps, 1 µs)"
QEMU_JSON = "qemu.json"


@POWER.register("qemu")
class QemuPower(PowerProtocol):
    """Power off = quit QEMU and start a fresh paused one; power on = `cont`."""

    @classmethod
    def build(cls, _s: None, bench: BenchContext) -> QemuPower:
        return cls(bench.qemu())

    def __init__(self, machine: QemuMachine) -> None:
        self.machine = machine

    @as_step("power off")
    def off(self) -> int:
        t_ns = time.monotonic_ns()
        m = self.machine
        if m.pid is None or m.resumed:
            m.launch()  # a fresh process: every boot is a cold one
        return t_ns

    @as_step("power on")
    def on(self) -> int:
        if self.machine.pid is None:
            self.machine.launch()
        return self.machine.resume()

    def artifacts(self, folder: Path) -> dict[str, Any]:
        """Keep the trace (the reference edges) and how QEMU ran, beside the run."""
        m = self.machine
        if m.trace.exists():
            shutil.copyfile(m.trace, folder / TRACE_FILE)
        ev = m.resume_event
        info = {
            "pid": m.pid,
            "command": m.command,
            "resume_wall_us": ev.wall_us if ev else None,
            "command_wall_us": m.command_wall_us,
            "console_pty": m.console_pty,
            "images": str(m.images),
            "uboot_env": m.env,
            "gpio": m.cfg.gpio,
        }
        (folder / QEMU_JSON).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        return {"qemu": {"trace": TRACE_FILE, "info": QEMU_JSON}}

    def close(self) -> None:
        self.machine.close()


@ANALYZER.register("qemu")
class QemuTraceAnalyzer(AnalyzerProtocol):
    """A logic analyzer made of QEMU's GPIO trace: sample 0 at arming, `power` rising at
    QEMU's RESUME stamp, each marker line at its traced edge. Both stamps are QEMU's
    wall clock in µs, so 1 MHz is the natural rate (the trace's resolution)."""

    @classmethod
    def parse(cls, t: Table, base: Path) -> None:
        if t.has("channels"):
            t.error("channels", "no table: the QEMU trace capture has fixed channels", t.data)

    @classmethod
    def build(cls, _s: None, bench: BenchContext) -> QemuTraceAnalyzer:
        return cls(bench.qemu(), bench.shared.samplerate)

    def __init__(self, machine: QemuMachine, samplerate: int) -> None:
        self.machine = machine
        self.samplerate = samplerate
        self.layout = byte_layout(CAPTURE_CHANNELS)
        self._raw: Path | None = None
        self._armed_ns = 0
        self._armed_wall_us = 0

    @as_step("analyzer arm")
    def arm(self, raw: Path) -> int:
        self._raw = raw
        self._armed_ns = time.monotonic_ns()
        self._armed_wall_us = time.time_ns() // 1000
        return self._armed_ns

    @as_step("analyzer stop")
    def stop(self) -> CaptureResult:
        raw = self._raw
        if raw is None:
            raise InstrumentError("qemu analyzer: stop without arm")
        stopped = time.monotonic_ns()
        end_us = time.time_ns() // 1000
        try:
            edges = parse_trace(self.machine.trace) if self.machine.trace.exists() else []
        except ArtifactError as e:
            raise InstrumentError(f"qemu analyzer: {e}") from None
        rate = self.samplerate
        t0 = self._armed_wall_us

        def sample(wall_us: int) -> int:
            return max(0, (wall_us - t0) * rate // 1_000_000)

        # numpy here: loading a config imports every driver; `rig run --help` needs none.
        import numpy as np

        n = sample(end_us) + 1
        data = np.zeros(n, dtype=np.uint8)
        ev = self.machine.resume_event
        if ev is not None:
            data[sample(ev.wall_us) :] |= 1 << CAPTURE_CHANNELS[names.POWER]
        for marker, line in self.machine.cfg.gpio.items():
            bit = np.uint8(1 << CAPTURE_CHANNELS[marker])
            level, since = 0, 0
            for e in (e for e in edges if e.line == line):
                if e.level and not level:
                    since = sample(e.wall_us)
                elif level and not e.level:
                    data[since : sample(e.wall_us)] |= bit
                level = e.level
            if level:
                data[since:] |= bit
        data.tofile(raw)
        self._raw = None
        return CaptureResult(raw, n, rate, self._armed_ns, stopped, clock=TRACE_CLOCK)


@CONSOLE.register("qemu")
class QemuConsole(SerialConsole):
    """The PL011 on the pty of the QEMU process now running, reopened after each relaunch."""

    @classmethod
    def build(cls, _s: None, bench: BenchContext) -> QemuConsole:
        return cls(bench.qemu(), bench.shared.baud)

    def __init__(self, machine: QemuMachine, baud: int) -> None:
        self.machine = machine
        if machine.pid is None:
            machine.launch()
        super().__init__(machine.console_pty, baud)

    def start(self, jsonl: Path, on_chunk: Callable[[Chunk], None] | None = None) -> None:
        if self.machine.console_pty != self.port:
            self.reopen(self.machine.console_pty)
        super().start(jsonl, on_chunk)
