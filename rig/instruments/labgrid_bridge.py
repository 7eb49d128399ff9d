"""The labgrid side of the `labgrid` power driver: run by labgrid's own Python.

labgrid pins `pyserial-labgrid`, which overwrites pyserial's `serial` module (labgrid
issue #1245), so this script imports nothing from bootrig and runs in labgrid's own
environment. It acquires the place, switches its power resource with labgrid's driver,
and releases the place when told to, when its stdin closes, or on SIGTERM (sent by the
kernel when the rig dies).

Protocol: one JSON object per line. The script answers first with
`{"ok": true, "place": ..., "resources": [...], ...}` (or `{"ok": false, "error": ...}`),
then reads `{"cmd": "on" | "off" | "release"}` and answers each with
`{"ok": true, "t_ns": <CLOCK_MONOTONIC ns before the switch>, "done_ns": ..., "state": ...}`.
labgrid's own prints go to stderr, so they cannot corrupt the protocol.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import signal
import sys
import time
from typing import Any

# What drives each of labgrid's power resources, as `labgrid-client power` pairs them.
_DRIVERS = {
    "NetworkPowerPort": ("NetworkPowerDriver",),
    "PDUDaemonPort": ("PDUDaemonDriver",),
    "NetworkUSBPowerPort": ("USBPowerDriver",),
    "NetworkSiSPMPowerPort": ("SiSPMPowerDriver",),
    "TasmotaPowerPort": ("TasmotaPowerDriver",),
    "NetworkYKUSHPowerPort": ("YKUSHPowerDriver",),
    "NetworkSysfsGPIO": ("GpioDigitalOutputDriver", "DigitalOutputPowerDriver"),
}
#: Credentials in a resource parameter (a PDU URL may carry user:password@).
_USERINFO = re.compile(r"(?<=://)[^/@\s]*@")


class Stop(Exception):
    """SIGTERM: release and leave."""


class Bridge:
    def __init__(self, place: str, resource: str | None) -> None:
        self.place_name, self.resource_name = place, resource
        self.acquired_here = False
        self.session: Any = None

    def start(self, coordinator: str) -> None:
        """Connect, acquire the place unless it is already ours, bind its power driver;
        `close()` undoes whatever of this was done."""
        from labgrid.remote.client import start_session

        ns = argparse.Namespace(place=self.place_name, allow_unmatched=False, kick=False)
        self.session = start_session(coordinator, extra={"args": ns})
        self.loop = self.session.loop
        if not self.session.get_place(self.place_name).acquired:
            self.loop.run_until_complete(self.session.acquire())
            self.acquired_here = True
        self.place = self.session.get_acquired_place(self.place_name)  # ours, or allowed us
        self.driver, self.resource = self._power_driver()

    def _power_driver(self) -> tuple[Any, Any]:
        from labgrid import Target, target_factory
        from labgrid.resource.remote import RemotePlace, RemotePlaceManager

        manager = RemotePlaceManager.get()
        manager.session, manager.loop = self.session, self.loop
        target = Target(self.place.name)
        RemotePlace(target, name=self.place.name)
        found = [
            r
            for r in target.resources
            if type(r).__name__ in _DRIVERS
            and (self.resource_name is None or r.name == self.resource_name)
        ]
        if not found:
            have = ", ".join(f"{type(r).__name__} {r.name!r}" for r in target.resources)
            want = f"named {self.resource_name!r} " if self.resource_name else ""
            raise LookupError(
                f"place {self.place.name!r} has no power resource {want}"
                f"(it has: {have or 'nothing'})"
            )
        if len(found) > 1 and self.resource_name is None:
            names = ", ".join(repr(r.name) for r in found)
            raise LookupError(
                f"place {self.place.name!r} has {len(found)} power resources ({names}): "
                "say which with [power] resource"
            )
        res = found[0]
        driver = None
        for i, cls_name in enumerate(_DRIVERS[type(res).__name__]):
            cls = target_factory.class_from_string(cls_name)
            # The first driver binds the resource: by its name when the place has several.
            bind = i == 0 and self.resource_name is not None and len(cls.bindings) == 1
            target.set_binding_map({next(iter(cls.bindings)): res.name} if bind else {})
            driver = cls(target, name=None)
            target.activate(driver)
        return driver, res

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        resources = []
        for (name, cls), entry in self.session.get_target_resources(self.place).items():
            params = {
                k: _USERINFO.sub("***@", v) if isinstance(v, str) else v
                for k, v in entry.args.items()
            }
            resources.append({"name": name, "cls": cls, "params": params, "avail": entry.avail})
        return {
            "ok": True,
            "labgrid": version("labgrid"),
            "place": self.place.name,
            "acquired": self.place.acquired,
            "acquired_by_rig": self.acquired_here,
            "power_resource": {"cls": type(self.resource).__name__, "name": self.resource.name},
            "resources": resources,
        }

    def switch(self, on: bool) -> dict[str, Any]:
        t = time.monotonic_ns()
        self.driver.on() if on else self.driver.off()
        done = time.monotonic_ns()
        try:
            state = bool(self.driver.get())
        except NotImplementedError:  # some switches cannot be read back
            state = None
        return {"ok": True, "t_ns": t, "done_ns": done, "state": state}

    def release(self) -> None:
        if self.acquired_here:
            self.acquired_here = False
            self.loop.run_until_complete(self.session.release())

    def close(self) -> None:
        if self.session is None:
            return
        try:
            self.release()
        finally:
            self.loop.run_until_complete(self.session.stop())
            self.loop.run_until_complete(self.session.close())


def _die_with_parent(parent: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG: SIGTERM lets us release
    if os.getppid() != parent:  # the rig died before the line above
        raise Stop


def _on_term(*_: object) -> None:
    raise Stop


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--coordinator", required=True)
    p.add_argument("--place", required=True)
    p.add_argument("--resource")
    p.add_argument("--parent", type=int, required=True)
    a = p.parse_args()
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # labgrid prints ("acquired place ...") go to stderr
    sys.stdout = sys.stderr

    def say(obj: dict[str, Any]) -> None:
        proto.write(json.dumps(obj) + "\n")

    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the rig's Ctrl-C is the rig's to handle
    bridge = Bridge(a.place, a.resource)
    try:
        _die_with_parent(a.parent)
        bridge.start(a.coordinator)
        say(bridge.describe())
        for line in sys.stdin:
            cmd = json.loads(line).get("cmd")
            if cmd in ("on", "off"):
                say(bridge.switch(cmd == "on"))
            elif cmd == "release":
                bridge.release()
                say({"ok": True})
                break
            else:
                say({"ok": False, "error": f"unknown command {cmd!r}"})
    except Stop:
        pass
    except Exception as e:  # every failure goes back to the rig as one line, with its kind
        # labgrid's UserError is already a sentence for people (who holds the place).
        kind = "" if type(e).__name__ == "UserError" else f"{type(e).__name__}: "
        say({"ok": False, "error": kind + str(e).removeprefix("Error: ")})
        return 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # let the release finish
        bridge.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
