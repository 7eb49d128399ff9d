"""Build the instruments a config names, and always release them.

Each instrument is built by its registered driver (rig.instruments.registry). For a
`[sim]` config the simulated board is started first (a process of its own, like real
hardware on a bench) and drivers use its ports where the config says "sim"; for a
`[qemu]` config one QEMU machine stands behind power, console and analyzer.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from rig.config.load import RigConfig
from rig.errors import ConfigError, InstrumentError
from rig.instruments.analyzer_sim import Control
from rig.instruments.console_serial import SerialConsole
from rig.instruments.place_claim import PlaceClaim
from rig.instruments.protocols import AnalyzerProtocol, PowerProtocol
from rig.instruments.registry import ANALYZER, CONSOLE, POWER, BenchContext, DriverSpec
from rig.instruments.target_claim import TargetClaims, targets
from rig.model.run import RunPlace

if TYPE_CHECKING:
    from rig.instruments.qemu.machine import QemuMachine


@dataclass
class Bench:
    power: PowerProtocol
    console: SerialConsole
    analyzer: AnalyzerProtocol | None
    sim_pid: int | None
    sim_control: Control | None = None  # the simulated board's control socket, if any
    place: RunPlace | None = None  # the labgrid place the target is, for run.json
    # The stamp of the power-off that ended the previous cycle, while the board has stayed
    # off since: that is when its rail went down, not this cycle's own off command.
    off_since_ns: int | None = None


class Instruments:
    """Context manager: `with Instruments(cfg) as bench: ...`."""

    def __init__(self, cfg: RigConfig) -> None:
        self.cfg = cfg
        self._stack = ExitStack()

    def __enter__(self) -> Bench:
        cfg = self.cfg
        try:
            ctx = BenchContext(cfg=cfg, stack=self._stack)
            if cfg.target is not None:  # before labgrid, which lets any process of ours in
                claim = PlaceClaim(cfg.target.place, cfg.target.coordinator)
                claim.claim()
                self._stack.callback(claim.release)
            # Before any port is opened: a second rig on this board is told which rig
            # drives it, not which processes have a device open.
            claims = TargetClaims(targets(cfg), cfg.results_dir)
            claims.claim()
            self._stack.callback(claims.release)
            if cfg.sim is not None:
                from simboard.client import SimProcess  # the simulator only when asked for

                ctx.sim = self._stack.enter_context(
                    SimProcess(cfg.sim.profile, seed=cfg.sim.seed, options=cfg.sim.options)
                )
            if cfg.qemu is not None:
                ctx.qemu_factory = self._qemu_machine
            power = POWER.build(cfg.power.spec, ctx)
            console = CONSOLE.build(cfg.console.spec, ctx)
            a = cfg.analyzer
            analyzer = ANALYZER.build(DriverSpec("analyzer", a.driver, a.settings), ctx)
            sim = ctx.sim
            pid = sim.pid if sim is not None else (ctx.qemu().pid if cfg.qemu else None)
            place = ctx.place.record() if ctx.place else None
            return Bench(power, console, analyzer, pid, sim.control if sim else None, place)
        except BaseException:
            self._stack.close()
            raise

    def _qemu_machine(self) -> QemuMachine:
        """The emulated board: one QEMU process per power cycle, owned by the power
        driver; the console and the trace analyzer follow the process now running."""
        from rig.instruments.qemu.machine import QemuMachine

        assert self.cfg.qemu is not None
        try:
            images = self.cfg.qemu.image_dir()
        except ConfigError as e:
            raise InstrumentError(str(e)) from None
        machine = QemuMachine(self.cfg.qemu, images)
        self._stack.callback(machine.close)
        return machine

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stack.close()
