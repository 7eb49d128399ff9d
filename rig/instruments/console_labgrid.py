"""The `labgrid` console: the serial console of the labgrid place power acquired.

The place's `NetworkSerialPort` (ser2net, or labgrid's exporter serving a local port) is
read with bootrig's own pyserial as `socket://` (protocol raw) or `rfc2217://`, not with
labgrid's driver: labgrid's environment holds the `pyserial-labgrid` fork, and the
console's stamps must be taken in this process, on the rig's clock.
"""

from __future__ import annotations

from pathlib import Path

from rig.config.tomlcheck import Table
from rig.errors import InstrumentError
from rig.instruments.console_serial import SerialConsole
from rig.instruments.registry import CONSOLE, BenchContext


@CONSOLE.register("labgrid")
class LabgridConsole:
    @classmethod
    def parse(cls, t: Table, base: Path) -> None:
        return None  # which resource is [target] console_resource

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
            console = SerialConsole(url, speed)
        except InstrumentError as e:
            raise InstrumentError(f"labgrid place {bench.place.name!r}: {e}") from None
        bench.stack.callback(console.close)
        return console
