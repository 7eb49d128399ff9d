"""The simulated SCPI bench supply: its state, its timing and its readings.

One instrument, reachable over TCP (127.0.0.1, like a LAN supply's raw socket port) and
over a pty (like its USB-serial port); commands from either run one at a time, as on
the real thing. Set commands act when their line arrives (OUTP ON at host time T is a
power-on at T, like a relay frame). A query is answered `response_ms` after it arrived;
a measurement averages the rail over the time it takes, and a supply limited to N
readings per second takes 1/N s for each, back to back (the "slow supply").
"""

from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np

from rig import __version__
from simboard import scpi
from simboard.board import Board, Boot
from simboard.current import Rail, rail
from simboard.profile import Profile
from simboard.scpi import Command, ScpiError

#: Seed stream of the readback noise (simboard.current uses 6 for the wobble).
_NOISE = 7
VOLTS_MAX, AMPS_MAX = 30.0, 10.0


def boot_rail(profile: Profile, seed: int | None, boot: Boot, idle_v: float) -> Rail:
    """The rail of one boot as the supply delivered it (truth and readback agree)."""
    return rail(
        profile,
        seed,
        boot.index,
        [s.end_s for s in boot.timeline.stages],
        boot.volts,
        boot.limit_a,
        boot.cut_s(),
        idle_v,
    )


class Supply:
    def __init__(self, board: Board, profile: Profile, seed: int) -> None:
        self.board = board
        self.profile = profile
        self.spec = profile.supply
        self.seed = seed
        self.idn = f"bootrig,SIM-PSU1,SIM{seed:08d},{__version__}"
        self._lock = threading.Lock()  # one command at a time, whichever port it came on
        self._rng = np.random.default_rng([seed, _NOISE])
        self._busy_ns = 0  # when the reading in progress ends
        self._errors: deque[str] = deque(maxlen=20)
        self._rails: dict[tuple[int, int | None], Rail] = {}
        self.readings = 0
        self.commands = 0

    def handle(self, line: str, t_ns: int) -> str | None:
        """Run one received line (arrived at host `t_ns`); sleeps until the answer is due
        and returns it (None when the line held no query)."""
        answers: list[str] = []
        with self._lock:
            for text in scpi.split_line(line):
                self.commands += 1
                try:
                    cmd = scpi.parse(text)
                    answer, due_ns = self._run(cmd, t_ns)
                except ScpiError as e:
                    self._errors.append(str(e))
                    continue
                if answer is not None:
                    _sleep_until(due_ns)
                    answers.append(answer() if callable(answer) else answer)
                    t_ns = max(t_ns, due_ns)
        return ";".join(answers) if answers else None

    def _run(self, cmd: Command, t_ns: int) -> tuple[object, int]:
        h, q = cmd.header, cmd.query
        due = t_ns + round(self.spec.response_ms * 1e6)
        if h == "*IDN" and q:
            return self.idn, due
        if h == "*OPC" and q:
            return "1", due
        if h == "*CLS":
            self._errors.clear()
            return None, t_ns
        if h == "*RST":
            self.board.output(False, t_ns)
            self.board.set_point(self.spec.volts, self.spec.current_limit_a)
            return None, t_ns
        if h == "SYST:ERR" and q:
            return (self._errors.popleft() if self._errors else '0,"No error"'), due
        if h == "OUTP":
            if q:
                return ("1" if self.board.output_on else "0"), due
            self.board.output(scpi.boolean(cmd), t_ns)
            return None, t_ns
        if h == "VOLT":
            if q:
                return f"{self.board.volts:.3f}", due
            self.board.set_point(volts=scpi.number(cmd, 0, 0.0, VOLTS_MAX))
            return None, t_ns
        if h == "CURR":
            if q:
                return f"{self.board.limit_a:.4f}", due
            self.board.set_point(limit_a=scpi.number(cmd, 0, 0.0, AMPS_MAX))
            return None, t_ns
        if h == "APPL":
            if q:
                return f"{self.board.volts:.3f},{self.board.limit_a:.4f}", due
            v, a = scpi.number(cmd, 0, 0.0, VOLTS_MAX), scpi.number(cmd, 1, 0.0, AMPS_MAX)
            self.board.set_point(v, a)
            return None, t_ns
        if h in ("MEAS:CURR", "MEAS:VOLT") and q:
            return self._measure(h == "MEAS:CURR", t_ns)
        raise ScpiError(scpi.UNDEFINED_HEADER, f"{h}{'?' if q else ''}")

    def _measure(self, amps: bool, t_ns: int) -> tuple[object, int]:
        """A reading averages the rail from its start to its answer."""
        width = self.spec.response_ms * 1e-3
        if self.spec.max_readings_per_s > 0:
            width = max(width, 1.0 / self.spec.max_readings_per_s)
        start = max(t_ns, self._busy_ns)  # a slow supply first finishes the last one
        end = start + round(width * 1e9)
        self._busy_ns = end
        self.readings += 1

        def value() -> str:  # computed when due: a power cut meanwhile shows in it
            a, v = self._window(end - round(width * 1e9), end)
            if amps:
                return f"{a + self._rng.normal(0.0, self.spec.noise_a):.4f}"
            return f"{v + self._rng.normal(0.0, self.spec.noise_v):.3f}"

        return value, end

    def _window(self, t0_ns: int, t1_ns: int) -> tuple[float, float]:
        # With its output off the supply reads its terminals: the board's rail, which
        # the console adapter may hold up (back-powering).
        idle_v = self.board.volts if self.board.output_on else self.profile.power.back_power_v
        boot = self.board.latest(t1_ns)
        if boot is None:
            return 0.0, idle_v
        key = (boot.index, boot.drop_ns)
        r = self._rails.get(key)
        if r is None:
            self._rails = {k: v for k, v in self._rails.items() if k[0] == boot.index}
            idle = boot.volts if boot.switch == "relay" else self.profile.power.back_power_v
            r = self._rails[key] = boot_rail(self.profile, self.seed, boot, idle)
        edge = boot.power_edge_ns
        return r.mean((t0_ns - edge) / 1e9, (t1_ns - edge) / 1e9)

    def status(self) -> dict[str, object]:
        return {
            "output": self.board.output_on,
            "volts": self.board.volts,
            "current_limit_a": self.board.limit_a,
            "readings": self.readings,
            "commands": self.commands,
            "errors_queued": len(self._errors),
        }


def _sleep_until(t_ns: int) -> None:
    left = (t_ns - time.monotonic_ns()) / 1e9
    if left > 0:
        time.sleep(left)
