"""The `labgrid` console and analyzer, a `[target] place`'s defaults: its
`NetworkSerialPort` and the sigrok device it exports on this host, opened with bootrig's
own pyserial and sigrok-cli so their stamps are taken here, on the rig's clock."""

from __future__ import annotations

from pathlib import Path

from rig.config.tomlcheck import Table
from rig.errors import InstrumentError
from rig.instruments.analyzer_sigrok import SigrokAnalyzer, SigrokSettings
from rig.instruments.console_serial import SerialConsole
from rig.instruments.registry import ANALYZER, CONSOLE, BenchContext


@CONSOLE.register("labgrid")
class LabgridConsole:
    @classmethod
    def build(cls, _s: None, bench: BenchContext) -> SerialConsole:
        if bench.place is None:
            raise InstrumentError(
                "console labgrid: no labgrid place: set [target] place (or [power] driver "
                "= 'labgrid')"
            )
        target = bench.shared.target
        url, speed = bench.place.console_url(target.console_resource if target else None)
        try:
            return SerialConsole(url, speed)
        except InstrumentError as e:
            raise InstrumentError(f"labgrid place {bench.place.name!r}: {e}") from None


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
