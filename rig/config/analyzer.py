"""The `[analyzer]` keys every analyzer shares. `[analyzer.channels]` maps contract
names (power, bootm, ...) onto the device's channel names, which the device checks when
opened (`sigrok-cli --show`), not at load, so a config can be checked on any host."""

from __future__ import annotations

from dataclasses import dataclass

from rig import names
from rig.config.tomlcheck import Table
from rig.errors import ConfigError

#: The power rail must stay high this long to count as a power-up.
DEFAULT_DEBOUNCE_US = 1000.0


@dataclass(frozen=True)
class AnalyzerConfig:
    samplerate: int
    debounce_us: float
    channels: dict[str, str]  # contract name -> the device's channel name
    # Arm before the power-off, so the capture shows the rail fall (docs/cold-boot.md).
    arm_before_off: bool
    table: Table  # [analyzer]: `driver` and its own keys, read by the driver


def _channels(t: Table) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in list(t.data):
        dev = t.str(name)
        canon = names.canonical_marker(name)
        if canon not in names.CHANNELS:
            t.fail(name, f"expected a channel name ({', '.join(names.CHANNELS)}), found {name!r}")
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


def parse_analyzer(a: Table) -> AnalyzerConfig:
    return AnalyzerConfig(
        samplerate=a.int("samplerate", 1_000_000, min=1, max=100_000_000_000),
        debounce_us=a.float("debounce_us", DEFAULT_DEBOUNCE_US, min=0.0, max=1e6),
        channels=_channels(a.table("channels")) if a.has("channels") else {names.POWER: "D0"},
        arm_before_off=a.bool("arm_before_off", False),
        table=a,
    )
