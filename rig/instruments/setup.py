"""Build the instruments a config names (the simulated board first, for `[sim]`), and
always release them."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass

from rig.config.load import RigConfig
from rig.errors import ConfigError, InstrumentError
from rig.instruments.analyzer_sim import Control
from rig.instruments.console_serial import SerialConsole
from rig.instruments.drivers import driver_specs
from rig.instruments.protocols import AnalyzerProtocol, PowerProtocol
from rig.instruments.qemu.machine import QemuMachine
from rig.instruments.qemu.settings import QemuConfig
from rig.instruments.registry import ANALYZER, CONSOLE, POWER, BenchContext, Shared
from rig.instruments.target_claim import PlaceClaim, TargetClaims, targets
from rig.model.run import RunPlace


@dataclass
class Bench:
    power: PowerProtocol
    console: SerialConsole
    analyzer: AnalyzerProtocol | None
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
            specs = driver_specs(cfg)
            ctx = BenchContext(Shared.of(cfg), self._stack)
            if cfg.target is not None:  # before labgrid, which lets any process of ours in
                claim = PlaceClaim(cfg.target.place, cfg.target.coordinator)
                claim.claim()
                self._stack.callback(claim.release)
            # Before any port is opened: a second rig on this board is told which rig
            # drives it, not which processes have a device open.
            claims = TargetClaims(targets(cfg.console.port, specs), cfg.results_dir)
            claims.claim()
            self._stack.callback(claims.release)
            if cfg.sim is not None:
                from simboard.client import SimProcess  # the simulator only when asked for

                ctx.sim = self._stack.enter_context(
                    SimProcess(cfg.sim.profile, seed=cfg.sim.seed, options=cfg.sim.options)
                )
            if (qemu := specs.qemu) is not None:
                ctx.qemu_factory = lambda: self._qemu_machine(qemu)
            power = POWER.build(specs.power, ctx)
            console = CONSOLE.build(specs.console, ctx)
            analyzer = ANALYZER.build(specs.analyzer, ctx)
            control = ctx.sim.control if ctx.sim else None
            place = ctx.place.record() if ctx.place else None
            return Bench(power, console, analyzer, control, place)
        except BaseException:
            self._stack.close()
            raise

    def _qemu_machine(self, qemu: QemuConfig) -> QemuMachine:
        """The emulated board: one QEMU process per power cycle, owned by the power
        driver; the console and the trace analyzer follow the process now running."""
        try:
            images = qemu.image_dir()
        except ConfigError as e:
            raise InstrumentError(str(e)) from None
        machine = QemuMachine(qemu, images)
        self._stack.callback(machine.close)
        return machine

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
