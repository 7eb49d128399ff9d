"""The `labgrid` console: the place's `NetworkSerialPort`, read with bootrig's own
pyserial (`socket://` or `rfc2217://`) so its stamps are taken here, on the rig's clock;
labgrid's environment holds the `pyserial-labgrid` fork."""

from __future__ import annotations

from rig.errors import InstrumentError
from rig.instruments.console_serial import SerialConsole
from rig.instruments.registry import CONSOLE, BenchContext


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
