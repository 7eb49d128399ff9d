"""A rig session: instruments kept open across many cycles (a soak, a Robot suite),
opened on first use. A console that died in a cycle is reopened by its path before the
next; after a rig error everything is closed and reopened afresh.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack

from rig.artifacts.rundir import probe_results_dir
from rig.config.load import RigConfig
from rig.errors import InstrumentError
from rig.instruments.console_serial import SerialConsole
from rig.instruments.setup import Bench, Instruments
from rig.measure.cycle import CycleResult, run_cycle

_REOPEN_POLL_S = 0.1


def reseeded(cfg: RigConfig, offset: int) -> RigConfig:
    """The config with the simulated board's seed moved by `offset`: a fresh simulator
    repeats its first boots for one seed, which is no new sample."""
    if cfg.sim is None or not offset:
        return cfg
    return dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, seed=cfg.sim.seed + offset))


def reopen_console(port: str, baud: int, within_s: float) -> SerialConsole:
    """Open `port` again, retrying until it exists (a USB adapter re-enumerating)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return SerialConsole(port, baud)
        except InstrumentError as e:
            if time.monotonic() >= deadline:
                raise InstrumentError(
                    f"console {port} did not come back within {within_s:g} s: {e}"
                ) from None
            time.sleep(_REOPEN_POLL_S)


class Session:
    def __init__(self, cfg: RigConfig, reopen_s: float = 5.0) -> None:
        self.cfg = cfg
        self.reopen_s = reopen_s
        self.bench: Bench | None = None
        self.console_reopens = 0
        self._stack = ExitStack()

    def open(self) -> Bench:
        if self.bench is None:
            # Before anything is switched on.
            probe_results_dir(self.cfg.results_dir, f"{self.cfg.path}: key 'rig.results_dir'")
            stack = ExitStack()
            self.bench = stack.enter_context(Instruments(self.cfg))
            self._stack = stack
        return self.bench

    def _revive_console(self, bench: Bench) -> None:
        if not bench.console.error:
            return
        dead = bench.console
        dead.close()
        bench.console = reopen_console(dead.port, self.cfg.console.baud, self.reopen_s)
        self._stack.callback(bench.console.close)
        self.console_reopens += 1

    def cycle(
        self,
        *,
        run_id: str | None = None,
        during_hold: Callable[[], None] | None = None,
        abort: threading.Event | None = None,
    ) -> CycleResult:
        bench = self.open()
        self._revive_console(bench)
        # With work for the off-hold (a soak), the capture's conversion joins it there.
        return run_cycle(
            self.cfg,
            bench,
            run_id=run_id,
            during_hold=during_hold,
            abort=abort,
            defer_conversion=during_hold is not None,
        )

    def power_off(self) -> None:
        """Best effort: leave the target unpowered (Ctrl-C, end of a soak)."""
        if self.bench is not None:
            with contextlib.suppress(InstrumentError):  # the relay itself failed
                self.bench.power.off()

    def reset(self) -> None:
        """Close every instrument; the next cycle opens them afresh."""
        bench, self.bench = self.bench, None
        stack, self._stack = self._stack, ExitStack()
        if bench is not None:
            stack.close()

    close = reset

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
