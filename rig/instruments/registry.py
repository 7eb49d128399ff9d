"""Instrument drivers registered by config name (labgrid's `target_factory` pattern):
classes with `parse(t, base)` (their own keys into settings; none without) and
`build(settings, bench)` (docs/instruments.md, "Writing a driver")."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from rig.config.tomlcheck import Table
from rig.errors import InstrumentError

if TYPE_CHECKING:
    from rig.config.load import RigConfig
    from rig.config.target import TargetConfig
    from rig.instruments.place import PlaceInfo
    from rig.instruments.qemu.machine import QemuMachine
    from simboard.client import SimProcess


class Driver(Protocol):
    @classmethod
    def build(cls, settings: Any, bench: BenchContext) -> Any: ...


@dataclass(frozen=True)
class DriverSpec:
    """A driver's name and the settings it parsed from its table."""

    name: str
    settings: Any


@dataclass(frozen=True)
class Shared:
    """The config keys every driver may use; a driver's own keys are its settings."""

    config: Path  # the config file, named by what a device finds wrong in it
    console_port: str
    baud: int
    samplerate: int
    channels: dict[str, str]  # contract name -> the analyzer's channel name
    target: TargetConfig | None

    @classmethod
    def of(cls, cfg: RigConfig) -> Shared:
        a = cfg.analyzer
        return cls(
            cfg.path, cfg.console.port, cfg.console.baud, a.samplerate, a.channels, cfg.target
        )


@dataclass
class BenchContext:
    """What drivers share while a bench is built; `stack` releases all."""

    shared: Shared
    stack: ExitStack
    sim: SimProcess | None = None
    qemu_factory: Callable[[], QemuMachine] | None = None
    place: PlaceInfo | None = None  # the labgrid place power acquired
    _qemu: QemuMachine | None = field(default=None, repr=False)

    def port(self, port: str, which: str, what: str) -> str:
        """`port`, or the simulated board's `which` port where the config says "sim"."""
        if port != "sim":
            return port
        if self.sim is None:
            raise InstrumentError(f"{what}: port 'sim' without a simulated board")
        return str(getattr(self.sim, which))

    def qemu(self) -> QemuMachine:
        if self._qemu is None:
            if self.qemu_factory is None:
                raise LookupError("no [qemu] table")
            self._qemu = self.qemu_factory()
        return self._qemu


D = TypeVar("D", bound=type)


class Registry:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._drivers: dict[str, type[Driver]] = {}

    def register(self, name: str) -> Callable[[D], D]:
        def add(cls: D) -> D:
            if name in self._drivers:
                raise ValueError(f"{self.kind} driver {name!r} registered twice")
            self._drivers[name] = cls
            return cls

        return add

    def names(self) -> tuple[str, ...]:
        return tuple(self._drivers)

    def parse(self, t: Table, base: Path, default: str) -> DriverSpec:
        """Read `driver` and the driver's own keys; `t.done()`, after, rejects the rest."""
        name = t.str("driver", default, choices=self.names())
        parse = getattr(self._drivers[name], "parse", None)
        return DriverSpec(name, parse(t, base) if parse else None)

    def build(self, spec: DriverSpec, bench: BenchContext) -> Any:
        """The driver's instrument, released with the bench."""
        instrument = self._drivers[spec.name].build(spec.settings, bench)
        if instrument is not None:
            bench.stack.callback(instrument.close)
        return instrument


POWER = Registry("power")
CONSOLE = Registry("console")
ANALYZER = Registry("analyzer")


@ANALYZER.register("none")
class NoAnalyzer:
    """Console only: the host clock is the reference (docs/contract.md, "Time base")."""

    @classmethod
    def build(cls, _s: None, bench: BenchContext) -> None:
        return None
