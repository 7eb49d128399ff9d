"""The `labgrid` analyzer, a `[target] place`'s default: the sigrok device the place
exports on this host, captured by the `sigrok` driver; a place without one is measured
console-only."""

from __future__ import annotations

from pathlib import Path

from rig.config.tomlcheck import Table
from rig.errors import InstrumentError
from rig.instruments.analyzer_sigrok import SigrokAnalyzer, SigrokSettings
from rig.instruments.registry import ANALYZER, BenchContext


@ANALYZER.register("labgrid")
class LabgridAnalyzer(SigrokAnalyzer):
    """Builds a SigrokAnalyzer on the place's device (a subclass only so the registry
    sees its steps, tests/test_steps.py): never instantiated itself."""

    @classmethod
    def parse(cls, t: Table, base: Path) -> None:  # type: ignore[override]
        return None

    @classmethod
    def build(cls, _s: None, bench: BenchContext) -> SigrokAnalyzer | None:  # type: ignore[override]
        if bench.place is None:
            raise InstrumentError("analyzer labgrid: no labgrid place: set [target] place")
        device = bench.place.sigrok_device()
        if device is None:
            return None  # console only: the host clock is the reference
        return SigrokAnalyzer.build(SigrokSettings(device), bench)
