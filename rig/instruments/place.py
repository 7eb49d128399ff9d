"""A labgrid place as the rig's target (`[target] place`, `rig run --place`): the
resources the bridge of power_labgrid.py reports, turned into what the console and
analyzer drivers open (its NetworkSerialPort, its sigrok device); it opens nothing."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

from rig.errors import InstrumentError
from rig.model.run import RunPlace

#: labgrid's resource classes of a sigrok analyzer, as a place lists them.
SIGROK_CLASSES = ("SigrokDevice", "NetworkSigrokUSBDevice", "NetworkSigrokUSBSerialDevice")


@dataclass
class PlaceInfo:
    """The acquired place as the bridge described it, and what the rig opened of it."""

    identity: dict[str, Any]  # the bridge's first answer (labgrid_bridge.Bridge.describe)
    coordinator: str
    console: str | None = None  # the pyserial URL read
    analyzer: str | None = None  # the sigrok device captured

    @property
    def name(self) -> str:
        return str(self.identity.get("place"))

    def resources(self, classes: tuple[str, ...]) -> list[dict[str, Any]]:
        return [r for r in self.identity.get("resources", []) if r.get("cls") in classes]

    def _one(self, classes: tuple[str, ...], name: str | None, what: str, key: str) -> Any:
        found = [r for r in self.resources(classes) if name is None or r.get("name") == name]
        where = f"labgrid place {self.name!r}"
        if not found:
            have = ", ".join(
                f"{r.get('cls')} {r.get('name')!r}" for r in self.identity["resources"]
            )
            named = f" named {name!r}" if name else ""
            raise InstrumentError(f"{where} has no {what}{named} (it has: {have or 'nothing'})")
        if len(found) > 1:
            names = ", ".join(repr(r.get("name")) for r in found)
            raise InstrumentError(
                f"{where} has {len(found)} {what}s ({names}): say which with {key}"
            )
        res = found[0]
        if res.get("avail") is False:
            raise InstrumentError(
                f"{where}: its {what} {res.get('name')!r} is not available (its exporter "
                "does not see the device)"
            )
        return res

    def console_url(self, name: str | None) -> tuple[str, int]:
        """The pyserial URL and speed of the place's NetworkSerialPort."""
        res = self._one(("NetworkSerialPort",), name, "serial console (NetworkSerialPort)",
                        "[target] console_resource")  # fmt: skip
        p = res.get("params", {})
        _direct(p, self.name, "console")
        scheme = {"raw": "socket", "rfc2217": "rfc2217"}.get(p.get("protocol", "rfc2217"))
        if scheme is None:
            raise InstrumentError(
                f"labgrid place {self.name!r}: console protocol {p.get('protocol')!r} "
                "(expected raw or rfc2217)"
            )
        url = f"{scheme}://{p.get('host')}:{p.get('port')}"
        if scheme == "rfc2217":
            # As labgrid's SerialDriver opens it: a server in front of a port without
            # modem lines (a pty, some USB adapters) does not confirm SET_CONTROL.
            url += "?ign_set_control"
        self.console = url
        return url, int(p.get("speed") or 115200)

    def sigrok_device(self) -> str | None:
        """The `sigrok-cli -d` of the place's sigrok analyzer, None without one."""
        if not self.resources(SIGROK_CLASSES):
            return None
        res = self._one(SIGROK_CLASSES, None, "sigrok analyzer", "[analyzer] driver")
        p = res.get("params", {})
        driver = str(p.get("driver") or "")
        if res["cls"] == "SigrokDevice":
            device = driver  # labgrid passes it to sigrok-cli -d as it is
        else:
            _direct(p, self.name, "analyzer")
            here = ("127.0.0.1", "::1", "localhost", socket.gethostname(), socket.getfqdn())
            if str(p.get("host")) not in here:
                # labgrid runs sigrok-cli on the exporter over SSH; the rig runs its own
                # here, timed on this host's clock, so it must be this host's device.
                raise InstrumentError(
                    f"labgrid place {self.name!r}: its sigrok analyzer is on host "
                    f"{p.get('host')!r}; run the rig there, or set [analyzer] driver"
                )
            conn = (
                p.get("path") if "Serial" in res["cls"] else f"{p.get('busnum')}.{p.get('devnum')}"
            )
            device = f"{driver}:conn={conn}"
        self.analyzer = device
        return device

    def record(self) -> RunPlace:
        i = self.identity
        power = i.get("power_resource") or {}
        return RunPlace(
            name=self.name,
            coordinator=self.coordinator,
            acquired_by_rig=i.get("acquired_by_rig"),
            holder=i.get("acquired"),
            labgrid=i.get("labgrid"),
            power=f"{power.get('cls')} {power.get('name')!r}" if power else None,
            console=self.console,
            analyzer=self.analyzer,
        )


def _direct(params: dict[str, Any], place: str, what: str) -> None:
    extra = params.get("extra") or {}
    if extra.get("proxy_required"):
        raise InstrumentError(
            f"labgrid place {place!r}: its {what} is reachable only through labgrid's SSH "
            f"proxy ({extra.get('proxy')}), which the rig does not use"
        )
