"""Build the instruments a config names, and always release them.

For a `[sim]` config the simulated board is started first (a process of its own, like
real hardware on a bench) and its ports replace the word "sim" in the config.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from types import TracebackType

from rig.config import ConfigError, RigConfig
from rig.instruments.analyzer_sigrok import SigrokAnalyzer
from rig.instruments.analyzer_sim import Control, SimAnalyzer
from rig.instruments.console_serial import SerialConsole
from rig.instruments.protocols import AnalyzerProtocol, InstrumentError, PowerProtocol
from rig.instruments.relay_ch340 import Ch340Relay


@dataclass
class Bench:
    power: PowerProtocol
    console: SerialConsole
    analyzer: AnalyzerProtocol | None
    sim_pid: int | None
    sim_control: Control | None = None  # the simulated board's control socket, if any


class Instruments:
    """Context manager: `with Instruments(cfg) as bench: ...`."""

    def __init__(self, cfg: RigConfig) -> None:
        self.cfg = cfg
        self._stack = ExitStack()

    def __enter__(self) -> Bench:
        cfg = self.cfg
        try:
            if cfg.qemu is not None:
                return self._qemu_bench()
            relay_port, console_port, control, sim_pid = (
                cfg.power.port,
                cfg.console.port,
                None,
                None,
            )
            if cfg.sim is not None:
                from rig.sim.client import SimProcess  # the simulator only when asked for

                sim = self._stack.enter_context(
                    SimProcess(cfg.sim.profile, seed=cfg.sim.seed, options=cfg.sim.options)
                )
                sim_pid, control = sim.pid, sim.control
                relay_port = sim.relay if relay_port == "sim" else relay_port
                console_port = sim.console if console_port == "sim" else console_port
            power = Ch340Relay(relay_port, cfg.power.channel, cfg.power.baud)
            self._stack.callback(power.close)
            console = SerialConsole(console_port, cfg.console.baud)
            self._stack.callback(console.close)
            analyzer: AnalyzerProtocol | None = None
            a = cfg.analyzer
            if a.driver == "sim":
                assert control is not None
                analyzer = SimAnalyzer(control, a.samplerate, a.channels)
            elif a.driver == "sigrok":
                analyzer = SigrokAnalyzer(
                    a.device,
                    a.samplerate,
                    a.device_channels,
                    options=a.options,
                    trigger=a.trigger,
                    start_timeout_s=a.start_timeout_s,
                )
            if analyzer is not None:
                self._stack.callback(analyzer.close)
            return Bench(power, console, analyzer, sim_pid, control)
        except BaseException:
            self._stack.close()
            raise

    def _qemu_bench(self) -> Bench:
        """The emulated board: one QEMU process per power cycle, owned by the power
        driver; the console and the trace analyzer follow the process now running."""
        from rig.instruments.qemu.drivers import QemuConsole, QemuPower, QemuTraceAnalyzer
        from rig.instruments.qemu.machine import QemuMachine

        cfg = self.cfg
        assert cfg.qemu is not None
        try:
            images = cfg.qemu.image_dir()
        except ConfigError as e:
            raise InstrumentError(str(e)) from None
        machine = QemuMachine(cfg.qemu, images)
        power = QemuPower(machine)
        self._stack.callback(power.close)
        console = QemuConsole(machine, cfg.console.baud)
        self._stack.callback(console.close)
        analyzer: AnalyzerProtocol | None = None
        if cfg.analyzer.driver == "qemu":
            analyzer = QemuTraceAnalyzer(machine, cfg.analyzer.samplerate)
        return Bench(power, console, analyzer, machine.pid)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stack.close()
