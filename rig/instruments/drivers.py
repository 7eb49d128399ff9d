"""Every instrument driver (importing this registers them), and the rig config read
with them: each driver reads its own table, so a config is checked whole on load."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rig.config.load import RigConfig, read_config
from rig.config.tomlcheck import Table
from rig.errors import ConfigError
from rig.instruments import (  # noqa: F401 - imported for their @register side effect
    analyzer_sigrok,
    analyzer_sim,
    console_serial,
    labgrid_exports,
    power_command,
    power_labgrid,
    power_visa,
    relay_ch340,
    relay_numato,
)
from rig.instruments.analyzer_sigrok import SigrokSettings
from rig.instruments.qemu import drivers as qemu_drivers  # noqa: F401
from rig.instruments.qemu.settings import QemuConfig, parse_qemu
from rig.instruments.registry import ANALYZER, CONSOLE, POWER, DriverSpec
from rig.instruments.relay_ch340 import Ch340Settings
from rig.instruments.relay_numato import NumatoSettings


@dataclass(frozen=True)
class DriverSpecs:
    """Each instrument's driver and settings, and the QEMU machine behind `qemu` ones."""

    power: DriverSpec
    console: DriverSpec
    analyzer: DriverSpec
    qemu: QemuConfig | None


def load_config(path: Path, board: Path | None = None, overrides: Sequence[str] = ()) -> RigConfig:
    """`read_config`, every driver's keys included."""
    cfg = read_config(path, board, overrides)
    driver_specs(cfg)  # a driver's bad key fails now, not when the bench opens
    return cfg


def driver_specs(cfg: RigConfig) -> DriverSpecs:
    """Each driver's settings, read from its own table of `cfg` (errors name file and key)."""
    base, target = cfg.path.parent, cfg.target
    p, c, a = cfg.power.table, cfg.console.table, cfg.analyzer.table
    if target is None or p.has("driver"):
        power = POWER.parse(p, base, "ch340")
    if target is not None:
        # The place supplies power: whatever [power] names is checked, then unused, so
        # one config serves every place of a kind (`rig run --place NAME`).
        power = DriverSpec("labgrid", target)
    console = CONSOLE.parse(c, base, "qemu" if cfg.console.port == "qemu" else "serial")
    if target is not None:  # ... and the console: its NetworkSerialPort
        console = DriverSpec("labgrid", None)
    # ... and, unless [analyzer] says otherwise, the analyzer it exports (if any).
    analyzer = ANALYZER.parse(a, base, "labgrid" if target is not None else "none")
    for t in (p, c, a):
        t.done()
    if cfg.analyzer.arm_before_off:
        _check_arm_before_off(a, analyzer)
    qemu = parse_qemu(cfg.qemu, base) if cfg.qemu is not None else None
    named = {"power.driver": power, "console.port": console, "analyzer.driver": analyzer}
    uses = [key for key, spec in named.items() if spec.name == "qemu"]
    if uses and qemu is None:
        raise ConfigError(f"{cfg.path}: key '{uses[0]}': 'qemu' needs a [qemu] table")
    if qemu is not None and len(uses) < 2:
        raise ConfigError(
            f"{cfg.path}: key 'qemu': the emulated board needs power.driver = 'qemu' and "
            "console.port = 'qemu'"
        )
    if cfg.sim is None:
        s = power.settings
        if isinstance(s, Ch340Settings | NumatoSettings) and s.port == "sim":
            raise ConfigError(f"{cfg.path}: key 'power.port': port 'sim' needs a [sim] table")
        if analyzer.name == "sim":
            raise ConfigError(f"{cfg.path}: key 'analyzer.driver': 'sim' needs a [sim] table")
    return DriverSpecs(power, console, analyzer, qemu)


def _check_arm_before_off(a: Table, spec: DriverSpec) -> None:
    """Arming early shows the rail fall only where samples flow before the power-on."""
    if spec.name in ("none", "qemu"):
        why = "no analyzer" if spec.name == "none" else "the QEMU trace starts with its process"
        a.error("arm_before_off", f"false with driver {spec.name!r} ({why})", True)
    if isinstance(spec.settings, SigrokSettings) and spec.settings.trigger:
        a.fail(
            "arm_before_off",
            f"a trigger ({a.key('trigger')} = {spec.settings.trigger!r}) "
            "starts the samples at the trigger, so the rail fall before it is never "
            "captured: drop one of the two",
        )
