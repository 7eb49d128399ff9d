"""A bench supply through PyVISA (pyvisa-py), speaking SCPI (docs/power.md), sampled
from power-on (power.jsonl) and through the off-hold (power_hold.jsonl). A sampling
failure is recorded; it does not end the boot being measured."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rig.artifacts import powerlog
from rig.config.tomlcheck import Table
from rig.errors import InstrumentError
from rig.instruments.protocols import PowerProtocol
from rig.instruments.registry import POWER, BenchContext
from rig.model.capture import PowerReading
from rig.steps import as_step

#: `resource` values that mean the simulated board's supply (TCP, or its pty).
SIM_RESOURCES = ("sim", "sim-serial")
SET_COMMANDS = ("volt-curr", "apply")
#: A set-point read back further off than this (relative, plus 1 mV / 1 mA) was not taken.
SETPOINT_TOLERANCE = 0.01


@dataclass(frozen=True)
class VisaSettings:
    resource: str
    voltage: float
    current_limit: float
    sample_hz: float = 50.0  # 0: as fast as the supply answers
    timeout_s: float = 2.0
    baud: int = 9600  # serial resources only
    termination: str = "\n"
    set_command: str = "volt-curr"


@POWER.register("visa")
class VisaPower(PowerProtocol):
    @classmethod
    def parse(cls, t: Table, base: Path) -> VisaSettings:
        resource = t.str("resource")
        if resource not in SIM_RESOURCES:
            import pyvisa.rname  # here: config loading pays for pyvisa only when used

            try:
                pyvisa.rname.parse_resource_name(resource)
            except ValueError:
                t.error(
                    "resource",
                    "a VISA resource such as 'TCPIP::<host>::5025::SOCKET' or "
                    "'ASRL/dev/ttyUSB0::INSTR', or 'sim'",
                    resource,
                )
        voltage = t.float("voltage")
        limit = t.float("current_limit")
        for key, v, hi in (("voltage", voltage, 1000.0), ("current_limit", limit, 100.0)):
            if not 0.0 < v <= hi:
                t.error(key, f"a number within (0, {hi:g}]", v)
        term = t.str("termination", VisaSettings.termination, choices=("\n", "\r\n", "\r"))
        return VisaSettings(
            resource=resource,
            voltage=voltage,
            current_limit=limit,
            sample_hz=t.float("sample_hz", VisaSettings.sample_hz, min=0.0, max=1e6),
            timeout_s=t.seconds("timeout_s", VisaSettings.timeout_s, min=0.01),
            baud=t.int("baud", VisaSettings.baud, min=1),
            termination=term,
            set_command=t.str("set_command", VisaSettings.set_command, choices=SET_COMMANDS),
        )

    @classmethod
    def build(cls, s: VisaSettings, bench: BenchContext) -> VisaPower:
        resource = s.resource
        if resource in SIM_RESOURCES:
            sim = bench.sim
            if sim is None:
                raise InstrumentError(f"visa power: resource {resource!r} needs a [sim] table")
            resource = sim.supply if resource == "sim" else sim.supply_serial
            # The simulated bench is rewired: the relay stays closed, the supply switches.
            resp = sim.control({"cmd": "power_switch", "switch": "supply"})
            if not resp.get("ok"):
                raise InstrumentError(f"visa power: simulator: {resp.get('error')}")
        return cls(replace(s, resource=resource))

    def __init__(self, s: VisaSettings) -> None:
        import pyvisa  # here: importing the rig does not pay for PyVISA

        self.resource = resource = s.resource
        self.voltage, self.current_limit, self.sample_hz = s.voltage, s.current_limit, s.sample_hz
        self._io = threading.Lock()  # one command at a time: the sampler shares the port
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._records: list[PowerReading] = []
        self._error: str | None = None
        # The off-hold: readings from an OUTP OFF (its stamp) to the next OUTP ON.
        self._holding = False
        self._hold: list[PowerReading] = []
        self._hold_off_ns = 0
        self._hold_error: str | None = None
        self._last_hold: tuple[int, list[PowerReading], str | None] | None = None
        self._rm: Any = None
        self._inst: Any = None
        self._errors: tuple[type[BaseException], ...] = (pyvisa.Error, OSError, ValueError)
        kw: dict[str, Any] = {
            "read_termination": s.termination,
            "write_termination": s.termination,
            "timeout": round(s.timeout_s * 1000),
            "open_timeout": round(s.timeout_s * 1000),
        }
        if resource.upper().startswith("ASRL"):
            kw["baud_rate"] = s.baud
        try:
            self._rm = pyvisa.ResourceManager("@py")
            self._inst = self._rm.open_resource(resource, **kw)
            if resource.upper().endswith("::SOCKET"):
                self._no_delay()
        except self._errors as e:
            self.close()
            raise InstrumentError(f"visa power {resource}: cannot open: {_why(e)}") from None
        try:
            self.idn = self._query("*IDN?")
            self._set_point(s.set_command)
        except InstrumentError:
            self.close()
            raise

    def _no_delay(self) -> None:
        """TCP_NODELAY, as NI-VISA: with Nagle on (pyvisa-py's default), the first
        MEAS:CURR? after OUTP ON waits 40 ms for the supply's delayed ACK, losing the
        readings of the first 40 ms of every boot."""
        from pyvisa import constants

        # pyvisa-py (0.8) cannot set the attribute on a SOCKET session: its socket then.
        with contextlib.suppress(Exception):
            self._inst.set_visa_attribute(constants.VI_ATTR_TCPIP_NODELAY, constants.VI_TRUE)
            return
        session = getattr(self._rm.visalib, "sessions", {}).get(self._inst.session)
        sock = getattr(session, "interface", None)
        if isinstance(sock, socket.socket):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _query(self, cmd: str) -> str:
        try:
            with self._io:
                return str(self._inst.query(cmd)).strip()
        except self._errors as e:
            raise InstrumentError(f"visa power {self.resource}: {cmd}: {_why(e)}") from None

    def _write(self, cmd: str) -> int:
        """Host monotonic ns right before the command went out."""
        try:
            with self._io:
                t = time.monotonic_ns()
                self._inst.write(cmd)
                return t
        except self._errors as e:
            raise InstrumentError(f"visa power {self.resource}: {cmd}: {_why(e)}") from None

    def _number(self, cmd: str) -> float:
        text = self._query(cmd)
        try:
            return float(text.split(",")[0])
        except ValueError:
            raise InstrumentError(
                f"visa power {self.resource}: {cmd}: expected a number, found {text!r}"
            ) from None

    def _set_point(self, how: str) -> None:
        v, a = self.voltage, self.current_limit
        if how == "apply":
            self._write(f"APPL {v:g},{a:g}")
        else:
            self._write(f"VOLT {v:g}")
            self._write(f"CURR {a:g}")
        # A supply ignores a value it does not like: the readback says what it took.
        for cmd, want, unit in (("VOLT?", v, 1e-3), ("CURR?", a, 1e-3)):
            got = self._number(cmd)
            if abs(got - want) > SETPOINT_TOLERANCE * want + unit:
                raise InstrumentError(
                    f"visa power {self.resource}: set {cmd[:-1]} {want:g}, the supply "
                    f"reads back {got:g}"
                )

    @as_step("power on")
    def on(self) -> int:
        holding = self._holding
        self._halt()
        self._last_hold = (self._hold_off_ns, self._hold, self._hold_error) if holding else None
        self._records, self._error = [], None
        t = self._write("OUTP ON")
        self._start(self._records, "boot")
        return t

    @as_step("power off")
    def off(self) -> int:
        if not self._holding:  # already off and reading the hold: it goes on
            self._halt()
        t = self._write("OUTP OFF")
        # A write to a supply that is gone can still succeed (TCP buffers it): the read
        # back is what proves the board is unpowered.
        try:
            state = self._query("OUTP?")
        except InstrumentError as e:
            raise InstrumentError(f"{e} (reading back OUTP OFF)") from None
        if state not in ("0", "OFF"):
            raise InstrumentError(f"visa power {self.resource}: OUTP OFF: output reads {state!r}")
        if not self._holding:
            self._hold, self._hold_off_ns, self._hold_error = [], t, None
            self._start(self._hold, "hold")
            self._holding = True
        return t

    def describe(self) -> dict[str, Any]:
        """What answered *IDN? (for run.json's instruments.power_device)."""
        parts = [p.strip() for p in self.idn.split(",")] + [""] * 4
        return {
            "resource": self.resource,
            "idn": self.idn,
            **dict(zip(("manufacturer", "model", "serial", "firmware"), parts, strict=False)),
            "voltage_set": self.voltage,
            "current_limit_set": self.current_limit,
        }

    def artifacts(self, folder: Path) -> dict[str, Any]:
        self._halt()
        recs, self._records = self._records, []
        out: dict[str, Any] = {
            "file": powerlog.POWER_JSONL,
            "readings": len(recs),
            "sample_hz_asked": self.sample_hz,
            "t_ns": "midpoint of the MEAS:CURR? request (t_req_ns) and answer (t_ans_ns)",
        }
        if len(recs) > 1:
            span = (recs[-1].t_ns - recs[0].t_ns) / 1e9
            out["sample_hz"] = (len(recs) - 1) / span if span > 0 else None
        if self._error:
            out["error"] = self._error
        powerlog.write(folder, recs)
        if self._last_hold is not None:  # the off-hold before this boot
            off_ns, hold, error = self._last_hold
            self._last_hold = None
            out["hold_file"] = powerlog.HOLD_JSONL
            out["hold_readings"] = len(hold)
            out["hold_off_ns"] = off_ns  # the OUTP OFF that began it
            if error:
                out["hold_error"] = error
            powerlog.write(folder, hold, powerlog.HOLD_JSONL)
        return {"power_readings": out}

    def close(self) -> None:
        self._halt()
        for obj in (self._inst, self._rm):
            if obj is not None:
                with contextlib.suppress(Exception):  # releasing: nothing left to report
                    obj.close()
        self._inst = self._rm = None

    def _halt(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._holding = False

    def _start(self, records: list[PowerReading], what: str) -> None:
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._sample, args=(records, what), name=f"visa-{what}", daemon=True
        )
        self._thread.start()

    def _sample(self, records: list[PowerReading], what: str) -> None:
        period = 1.0 / self.sample_hz if self.sample_hz > 0 else 0.0
        due = time.monotonic()
        while not self._stop.is_set():
            try:
                req = time.monotonic_ns()
                a = self._number("MEAS:CURR?")
                ans = time.monotonic_ns()
                v = self._number("MEAS:VOLT?")
            except InstrumentError as e:
                # The boot goes on; run.json says why readings stop.
                if what == "hold":
                    self._hold_error = str(e)
                else:
                    self._error = str(e)
                return
            records.append(PowerReading((req + ans) // 2, v, a, req, ans))
            if period:
                due += period
                now = time.monotonic()
                if due < now:
                    due = now  # behind: read again at once, never in a burst
                self._stop.wait(due - now)


def _why(e: BaseException) -> str:
    """A VISA error in one line (pyvisa's messages carry the VI_ code and its meaning)."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text[:300]
