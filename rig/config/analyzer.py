"""The `[analyzer]` table of a rig config.

`[analyzer.channels]` maps the contract names (power, bootm, ..., uart_tx) onto the
device's own channel names: `D0`..`D7` for the simulated board, whatever the sigrok
device calls them otherwise (`D0`.. on fx2lafw and the demo driver, `0`..`15` on DSLogic
and Logic16). Whether a sigrok device has the named channel is checked when the rig asks
the device (`sigrok-cli --show`), not at load, so a config can be checked on any host.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig import names
from rig.config.tomlcheck import Table
from rig.errors import ConfigError
from rig.instruments.qemu.settings import CAPTURE_CHANNELS as QEMU_CAPTURE_CHANNELS
from rig.instruments.registry import ANALYZER

_SIM_CHANNEL = re.compile(r"^D([0-7])$")


#: The power rail must stay high this long to count as a power-up (rig.config.snapshot too).
DEFAULT_DEBOUNCE_US = 1000.0


@dataclass(frozen=True)
class AnalyzerConfig:
    driver: str  # a registered analyzer driver: "sim", "sigrok", "qemu", "none"
    samplerate: int
    channels: dict[str, int]  # contract name -> bit of the sim/QEMU capture (D0 = 0)
    debounce_us: float
    device_channels: dict[str, str] = field(default_factory=dict)  # contract -> device name
    settings: Any = None  # the driver's own keys (rig.instruments.registry)
    # Arm before the power-off, so the capture shows the rail fall (docs/cold-boot.md).
    arm_before_off: bool = False


def _channels(t: Table, driver: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in list(t.data):
        dev = t.str(name)
        canon = names.canonical_marker(name)
        if canon not in names.CHANNELS:
            raise ConfigError(
                f"{t.path}: key '{t.key(name)}': expected a channel name "
                f"({', '.join(names.CHANNELS)}), found {name!r}"
            )
        if driver == "sim" and not _SIM_CHANNEL.match(dev):
            t.error(name, "a device channel D0..D7 (the simulated analyzer's)", dev)
        if not dev.strip():
            t.error(name, "a device channel name", dev)
        if dev in out.values():
            t.error(name, "a device channel not used by another signal", dev)
        if canon in out:  # kernel_init and its old name init_post: one marker, two wires
            t.error(name, f"no second channel for {canon} (wired to {out[canon]!r})", dev)
        out[canon] = dev
    if names.POWER not in out:
        raise ConfigError(f"{t.path}: missing key '{t.key(names.POWER)}' (the power rail channel)")
    return out


def parse_analyzer(a: Table, base: Path) -> AnalyzerConfig:
    spec = ANALYZER.parse(a, base, "none")
    driver = spec.name
    if driver == "qemu" and a.has("channels"):
        a.error("channels", "no table: the QEMU trace capture has fixed channels", a.data)
    device_channels = {names.POWER: "D0"}
    if a.has("channels"):
        device_channels = _channels(a.table("channels"), driver)
    channels = {n: i for i, n in enumerate(device_channels)}
    if driver == "qemu":
        channels = dict(QEMU_CAPTURE_CHANNELS)
    elif driver == "sim" or all(_SIM_CHANNEL.match(d) for d in device_channels.values()):
        channels = {n: int(d[1:]) for n, d in device_channels.items()}
    cfg = AnalyzerConfig(
        driver=driver,
        samplerate=a.int("samplerate", 1_000_000, min=1, max=100_000_000_000),
        channels=channels,
        debounce_us=a.float("debounce_us", DEFAULT_DEBOUNCE_US, min=0.0, max=1e6),
        device_channels=device_channels,
        settings=spec.settings,
        arm_before_off=a.bool("arm_before_off", False),
    )
    if cfg.arm_before_off:
        _check_arm_before_off(a, driver, spec.settings)
    a.done()
    return cfg


def _check_arm_before_off(a: Table, driver: str, settings: Any) -> None:
    """Arming early shows the rail fall only where samples flow before the power-on."""
    if driver in ("none", "qemu"):
        why = "no analyzer" if driver == "none" else "the QEMU trace starts with its process"
        a.error("arm_before_off", f"false with driver {driver!r} ({why})", True)
    if getattr(settings, "trigger", ""):
        raise ConfigError(
            f"{a.path}: key '{a.key('arm_before_off')}': a trigger "
            f"({a.key('trigger')} = {settings.trigger!r}) starts the samples at the trigger, "
            "so the rail fall before it is never captured: drop one of the two"
        )
