"""One simulated board with its relay, console and analyzer, behind a control socket."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from simboard import truth
from simboard.board import Board, Boot
from simboard.capture import Arming, check_arming, render, sample_count
from simboard.console import ConsolePort
from simboard.faults import FaultRates
from simboard.pdu_http import PduServer
from simboard.profile import Profile
from simboard.relay import RelayPort
from simboard.relay_numato import NumatoPort
from simboard.server import ControlServer
from simboard.supply import Supply
from simboard.supply_ports import PtyPort, TcpPort
from simboard.timeline import Fault, plan

COMMANDS = ("status", "arm", "stop", "power_switch", "inject", "shutdown")
#: Faults a bench injects at a moment it chooses (`inject`), not drawn per boot.
INJECTED = ("relay-lost", "analyzer-slow")
#: The longest start an analyzer is made to take (the rig waits up to 60 s for `arm`).
SLOW_START_MAX_S = 30.0


class Simulator:
    def __init__(
        self,
        profile: Profile,
        label: str,
        seed: int,
        nominal: bool,
        state_dir: Path,
        fault: Fault | None = None,
        done: threading.Event | None = None,
        rates: FaultRates | None = None,
        power_switch: str = "relay",
        supply_port: int = 0,
        pdu_port: int = 0,
        console_link: Path | None = None,
    ) -> None:
        self.profile = profile
        self.label = label
        self.seed = seed
        self.done = done or threading.Event()  # set by a shutdown request
        self._arming: Arming | None = None
        self._arm_lock = threading.Lock()
        self._arm_delay_s = 0.0  # the next arm's slow start (injected)
        # A console that can be closed under the client is published as a stable link.
        closes = (rates is not None and rates.console_lost > 0) or (
            fault is not None and fault.kind == "console-closed"
        )
        # A fixed link (console_link) is for a serial server configured before the board
        # started (ser2net behind a labgrid place, docs/instruments.md "labgrid").
        link = console_link or (Path(state_dir) / "console" if closes else None)
        self.console = ConsolePort(link)
        self.fault = fault
        self.rates = rates
        self.board = Board(
            profile,
            seed,
            nominal,
            self.console.submit,
            fault=fault,
            rates=rates,
            hangup=self.console.hangup_at,
        )
        self.relay = RelayPort(profile.power.relay_channels, self.board.frame)
        # The same relay contacts, driven through a Numato-style ASCII module instead.
        self.relay_numato = NumatoPort(profile.power.relay_channels, self.board.frame)
        # ... and through a network PDU's REST interface (labgrid's NetworkPowerPort).
        self.pdu = PduServer(profile.power.relay_channels, self.board.frame, pdu_port)
        self.board.set_switch(power_switch, time.monotonic_ns())
        # The first plan pays numpy's warm-up (tens of ms); a supply switching the board
        # answers nothing meanwhile, so pay it now rather than at the first power-on.
        plan(profile, seed, 0, nominal)
        # The bench supply, in series with the relay contacts (docs/simulator.md, "Supply").
        self.supply = Supply(self.board, profile, seed)
        self.supply_tcp = TcpPort(self.supply, port=supply_port)
        self.supply_pty = PtyPort(self.supply)
        self.control_path = Path(state_dir) / "control.sock"
        self.server = ControlServer(self.control_path, self.handle)

    def ready_line(self, pid: int) -> dict[str, Any]:
        b = self.profile.board
        return {
            "relay": self.relay.path,
            "relay_numato": self.relay_numato.path,
            "pdu": self.pdu.url,  # REST PDU on 127.0.0.1; outlets = relay channels
            "console": self.console.path,
            "supply": self.supply_tcp.resource,  # SCPI over TCP on 127.0.0.1
            "supply_serial": self.supply_pty.resource,  # the same supply on a pty
            "power_switch": self._switch(),
            "control": str(self.control_path),
            "pid": pid,
            "profile": self.label,
            "board": b.name,
            "variant": b.variant,
            "seed": self.seed,
            "fault": str(self.fault) if self.fault else None,
            "faults": self.rates.as_dict() if self.rates else None,
            "knobs": self.profile.settings.as_dict(),  # kernel_args, uboot_env it boots with
        }

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        cmd = req["cmd"]
        if cmd == "status":
            return self._status()
        if cmd == "arm":
            return self._arm(req)
        if cmd == "stop":
            return self._stop(req)
        if cmd == "inject":
            return self._inject(req)
        if cmd == "power_switch":
            self.board.set_switch(str(req.get("switch")), time.monotonic_ns())
            return {"ok": True, "power_switch": self._switch()}
        if cmd == "shutdown":
            self.done.set()
            return {"ok": True}
        return {"ok": False, "error": f"unknown cmd {cmd!r}; expected one of {', '.join(COMMANDS)}"}

    def _status(self) -> dict[str, Any]:
        frames, bad, garbage = self.relay.counters()
        with self.board.lock:
            relays = {str(ch): on for ch, on in self.board.relays.items()}
            boots = self.board.boot_count
        return {
            "ok": True,
            "powered": self.board.powered(time.monotonic_ns()),
            "relays": relays,
            "frames": frames,
            "bad_frames": bad,
            "garbage_bytes": garbage,
            "boots": boots,
            "armed": self._arming is not None,
            "console_sent": self.console.sent,
            "console_dropped": self.console.dropped,
            "console_late_max_us": self.console.late_max_ns / 1e3,
            "console_realtime": self.console.realtime,
            "console_hangups": self.console.hangups,
            "relay_lost": self.relay.closed,
            "arm_delay_s": self._arm_delay_s,
            "power_switch": self._switch(),
            "supply": self.supply.status(),
        }

    def _switch(self) -> str:
        """Which instrument switches the board (the other one is left closed/on)."""
        return self.board.switch

    def _arm(self, req: dict[str, Any]) -> dict[str, Any]:
        samplerate, wiring = check_arming(req.get("samplerate", 1_000_000), req.get("wiring"))
        with self._arm_lock:
            delay, self._arm_delay_s = self._arm_delay_s, 0.0
        if delay:
            time.sleep(delay)  # a slow start: sampling (and the answer) begins only now
        with self._arm_lock:
            self._arming = Arming(time.monotonic_ns(), samplerate, wiring)
            return {
                "ok": True,
                "armed_ns": self._arming.armed_ns,
                "samplerate": samplerate,
                "wiring": wiring,
            }

    def _inject(self, req: dict[str, Any]) -> dict[str, Any]:
        """A fault now: `relay-lost` (the CH340 module drops off the USB bus: its port
        vanishes and clients get EIO; the contacts keep their state, so the board goes on
        as it was switched) or `analyzer-slow` (the next `arm` takes `delay_s` to start)."""
        fault = req.get("fault")
        if fault == "relay-lost":
            self.relay.close()
            return {"ok": True, "fault": fault, "relay": self.relay.path}
        if fault == "analyzer-slow":
            delay = req.get("delay_s")
            if (
                not isinstance(delay, int | float)
                or isinstance(delay, bool)
                or not 0 < delay <= SLOW_START_MAX_S
            ):
                expected = f"seconds in (0, {SLOW_START_MAX_S:g}]"
                return {
                    "ok": False,
                    "error": f"inject: delay_s: expected {expected}, found {delay!r}",
                }
            with self._arm_lock:
                self._arm_delay_s = float(delay)
            return {"ok": True, "fault": fault, "delay_s": float(delay)}
        return {
            "ok": False,
            "error": f"inject: fault: expected one of {', '.join(INJECTED)}, found {fault!r}",
        }

    def _stop(self, req: dict[str, Any]) -> dict[str, Any]:
        stopped_ns = time.monotonic_ns()
        arming = self._arming
        if arming is None:
            return {"ok": False, "error": "stop: the analyzer is not armed"}
        paths: dict[str, Path] = {}
        for key in ("raw", "truth"):
            if key not in req:
                continue
            if not isinstance(req[key], str) or not Path(req[key]).parent.is_dir():
                expected = "a file path in an existing directory"
                return {
                    "ok": False,
                    "error": f"stop: {key}: expected {expected}, found {req[key]!r}",
                }
            paths[key] = Path(req[key])
        with self._arm_lock:  # a failed stop leaves the analyzer armed, so it can be retried
            if self._arming is arming:
                self._arming = None
        boots = self.board.snapshot(arming.armed_ns)
        broken = _analyzer_fault(boots, arming, stopped_ns)
        if broken is not None:
            # The capture is gone, the truth is not: tests check the rig's verdict with it.
            if "truth" in paths:
                self._truth(paths["truth"], boots, arming, stopped_ns)
            return {
                "ok": False,
                "error": f"stop: the analyzer dropped off the USB bus during boot {broken} "
                "(injected fault 'analyzer'): no samples",
            }
        t0 = time.perf_counter()
        n = (
            render(paths["raw"], boots, arming, stopped_ns)
            if "raw" in paths
            else sample_count(arming, stopped_ns)
        )
        render_s = time.perf_counter() - t0
        if "truth" in paths:
            self._truth(paths["truth"], boots, arming, stopped_ns)
        return {
            "ok": True,
            "samples": n,
            "samplerate": arming.samplerate,
            "armed_ns": arming.armed_ns,
            "stopped_ns": stopped_ns,
            "render_s": round(render_s, 4),
        }

    def _truth(self, path: Path, boots: list[Boot], arming: Arming, stopped_ns: int) -> None:
        self.console.forget({b.index for b in boots})  # the board forgot the others
        sent = {b.index: self.console.deliveries(b.index) for b in boots}
        doc = truth.truth(self.profile, self.label, self.seed, boots, arming, stopped_ns, sent)
        doc["fault"] = str(self.fault) if self.fault else None
        truth.write(path, doc)

    def close(self) -> None:
        self.server.close()
        self.supply_tcp.close()
        self.supply_pty.close()
        self.relay.close()
        self.relay_numato.close()
        self.pdu.close()
        self.console.close()


def _analyzer_fault(boots: list[Boot], arming: Arming, stopped_ns: int) -> int | None:
    """Index of a boot in the capture window whose fault breaks the analyzer, if any."""
    for b in boots:
        inside = arming.armed_ns <= b.relay_on_ns <= stopped_ns
        if inside and b.fault is not None and b.fault.kind == "analyzer":
            return b.index
    return None
