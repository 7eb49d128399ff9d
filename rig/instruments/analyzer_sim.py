"""The simulated board's logic analyzer, driven over the simulator's control socket: raw
samples as `sigrok-cli -O binary` writes them, from arming to stop."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rig.config.tomlcheck import Table
from rig.errors import InstrumentError
from rig.instruments.protocols import AnalyzerProtocol, CaptureResult, byte_layout
from rig.instruments.registry import ANALYZER, BenchContext
from rig.steps import as_step

Control = Callable[[dict[str, Any]], dict[str, Any]]
_CHANNEL = re.compile(r"^D[0-7]$")


@ANALYZER.register("sim")
class SimAnalyzer(AnalyzerProtocol):
    @classmethod
    def parse(cls, t: Table, base: Path) -> None:
        channels = t.table("channels")
        for name, dev in channels.data.items():
            if not _CHANNEL.match(dev):
                channels.error(name, "a device channel D0..D7 (the simulated analyzer's)", dev)

    @classmethod
    def build(cls, _s: None, bench: BenchContext) -> SimAnalyzer:
        if bench.sim is None:
            raise InstrumentError("sim analyzer: no simulated board")
        wiring = {name: int(dev[1:]) for name, dev in bench.shared.channels.items()}
        return cls(bench.sim.control, bench.shared.samplerate, wiring)

    def __init__(self, control: Control, samplerate: int, wiring: Mapping[str, int]) -> None:
        self._control = control
        self.samplerate = samplerate
        self.wiring = dict(wiring)
        self.layout = byte_layout(self.wiring)
        self._armed_ns: int | None = None
        self._raw: Path | None = None

    def _call(self, req: dict[str, Any]) -> dict[str, Any]:
        try:
            resp = self._control(req)
        except OSError as e:
            raise InstrumentError(f"sim analyzer: {req['cmd']} failed: {e}") from None
        if not resp.get("ok"):
            raise InstrumentError(f"sim analyzer: {req['cmd']}: {resp.get('error')}")
        return resp

    @as_step("analyzer arm")
    def arm(self, raw: Path) -> int:
        self._raw = raw
        resp = self._call({"cmd": "arm", "samplerate": self.samplerate, "wiring": self.wiring})
        self._armed_ns = int(resp["armed_ns"])
        return self._armed_ns

    @as_step("analyzer stop")
    def stop(self) -> CaptureResult:
        """Also leaves the simulator's ground truth as `truth.json` beside the samples."""
        raw = self._raw
        if self._armed_ns is None or raw is None:
            raise InstrumentError("sim analyzer: stop without arm")
        truth = raw.with_name("truth.json")
        resp = self._call({"cmd": "stop", "raw": str(raw), "truth": str(truth)})
        armed, self._armed_ns = self._armed_ns, None
        return CaptureResult(
            raw=raw,
            samples=int(resp["samples"]),
            samplerate=int(resp["samplerate"]),
            armed_ns=armed,
            stopped_ns=int(resp["stopped_ns"]),
            device_stop_s=float(resp.get("render_s") or 0.0),
        )
