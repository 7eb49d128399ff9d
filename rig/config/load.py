"""The rig configuration (`config/rig.toml`): the keys the rig shares, validated on load
(errors name file, key, expected and found). `[power]`, `[console]`, `[analyzer]` and
`[qemu]` keep the drivers' own keys as a `table` (rig.instruments.drivers reads them)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig.config.analyzer import AnalyzerConfig, parse_analyzer
from rig.config.budgets import beside
from rig.config.influx import InfluxSettings, parse_settings
from rig.config.snapshot import DEFAULT_BAUD
from rig.config.stages import parse_stages
from rig.config.target import TargetConfig, parse_target
from rig.config.tomlcheck import Table, apply_overrides, load_toml
from rig.errors import ConfigError, InputError
from rig.model.options import AnalysisOptions
from rig.model.stagespec import StageSpec

_SECRET_KEYS = re.compile(r"pass|secret|token|key$", re.IGNORECASE)


@dataclass(frozen=True)
class PowerConfig:
    off_hold_s: float
    power_off_after: bool
    table: Table  # [power]: `driver` and its own keys, read by the driver


@dataclass(frozen=True)
class ConsoleConfig:
    port: str  # a device or pyserial URL, "sim" (the simulated board's), or "qemu"
    baud: int
    table: Table  # [console]: `driver` and its own keys, read by the driver


@dataclass(frozen=True)
class SimConfig:
    profile: Path
    seed: int
    # CLI options for `rig sim serve`: overrides, and `faults` (the rates as JSON text)
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SoakConfig:
    """`[soak]`: defaults of `rig soak` (docs/soak.md); the command line wins."""

    cycles: int | None = None
    duration_s: float | None = None
    max_failure_rate: float = 0.0  # above it, `rig soak` exits 1
    max_consecutive_rig_errors: int = 5  # then the soak gives up (exit 3)
    console_reopen_s: float = 5.0  # how long a lost console may take to come back


@dataclass(frozen=True)
class RigConfig:
    path: Path
    rig: str
    board: str
    variant: str
    results_dir: Path
    power: PowerConfig
    console: ConsoleConfig
    analyzer: AnalyzerConfig
    sim: SimConfig | None
    boot_timeout_s: float
    post_ui_s: float
    stages: tuple[StageSpec, ...]
    raw: dict[str, Any]
    influx: InfluxSettings | None = None
    soak: SoakConfig | None = None
    qemu: Table | None = None  # [qemu], the emulated board's, read by its drivers
    analysis: AnalysisOptions = field(default_factory=AnalysisOptions)  # [analysis]
    target: TargetConfig | None = None  # [target]: a labgrid place (rig run --place)
    budgets: Path | None = None  # [board] budgets: the board's budgets file, if named

    @property
    def budgets_file(self) -> Path:
        """`[board] budgets`, else budgets.toml beside the config (may not exist)."""
        return self.budgets or beside(self.path)

    def snapshot(self) -> dict[str, Any]:
        """The config as loaded, secrets redacted: what run.json keeps."""
        return redact(self.raw)


def redact(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {
            k: "***" if _SECRET_KEYS.search(k) and isinstance(v, str) else redact(v)
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    return obj


def read_config(path: Path, board: Path | None = None, overrides: Sequence[str] = ()) -> RigConfig:
    """Read and validate the shared keys of a rig config; `board` replaces the simulated
    board profile, `overrides` are `KEY=VALUE` settings from the command line."""
    path = Path(path)
    data = load_toml(path)
    apply_overrides(data, overrides, path)
    root = Table(path, data)
    base = path.parent

    rig = root.table("rig")
    rig_name = rig.str("name", "bootrig")
    results_dir = (base / rig.str("results_dir", "../results")).resolve()
    rig.done()

    target = parse_target(root.table("target"), base)
    p = root.table("power", required=target is None)
    power = PowerConfig(p.seconds("off_hold_s", 0.5), p.bool("power_off_after", True), p)

    c = root.table("console", required=target is None)
    port = c.str("port", None if target else ...)
    if target is not None:  # the place's NetworkSerialPort
        port = f"labgrid place {target.place}"
    console = ConsoleConfig(port, c.int("baud", DEFAULT_BAUD, min=1, max=100_000_000), c)

    analyzer = parse_analyzer(root.table("analyzer"))
    if analyzer.arm_before_off:
        # The rail must still be up when the analyzer arms: a board switched off at the
        # end of the previous run fell before any capture began (docs/cold-boot.md).
        if p.has("power_off_after") and power.power_off_after:
            raise ConfigError(
                f"{path}: key 'analyzer.arm_before_off': needs power.power_off_after = "
                "false (the default then): a board switched off after each run falls "
                "before the next capture begins"
            )
        power = dataclasses.replace(power, power_off_after=False)

    sim: SimConfig | None = None
    if root.has("sim") or board is not None:
        s = root.table("sim")
        profile = board.resolve() if board else (base / s.str("profile")).resolve()
        if board:
            s.raw("profile", None)
        if not profile.is_file():
            where = "--board" if board else f"{path}: key 'sim.profile'"
            raise ConfigError(f"{where}: board profile {profile} does not exist")
        seed = s.int("seed", 1)
        opts: dict[str, Any] = {
            k: s.float(k)
            for k in ("usb_latency_ms", "usb_buffer_bytes", "drift_ppm", "back_power_v")
            if s.has(k)
        }
        if s.has("pdu_port"):  # a fixed port, for a labgrid exporter set up beforehand
            opts["pdu_port"] = s.int("pdu_port", min=1)
            if opts["pdu_port"] > 65535:
                s.error("pdu_port", "a TCP port 1..65535", opts["pdu_port"])
        if s.has("console_link"):  # a fixed console path, for a ser2net set up beforehand
            opts["console_link"] = os.path.abspath(base / s.str("console_link"))
        if s.has("faults"):
            opts["faults"] = _fault_rates(s.table("faults"))
        for k in ("quiet", "initcall_debug"):  # the board's kernel command line (docs/cost.md)
            if s.has(k):
                opts[k] = "on" if s.bool(k) else "off"
        opts.update(_sim_knobs(s))
        s.done()
        sim = SimConfig(profile=profile, seed=seed, options=opts)

    b = root.table("board")
    board_name = b.str("name", None)
    variant = b.str("variant", None)
    budgets = (base / b.str("budgets")).resolve() if b.has("budgets") else None
    if budgets is not None and not budgets.is_file():  # Robot and `rig soak` read it
        b.fail("budgets", f"no such budgets file {budgets}")
    b.done()
    if sim is not None:
        # The simulated board names itself; --board always wins over rig.toml's [board].
        prof = load_toml(sim.profile).get("board", {})
        if board is not None or board_name is None:
            board_name = prof.get("name", board_name)
        if board is not None or variant is None:
            variant = prof.get("variant", variant)

    t = root.table("timeouts")
    boot_timeout_s = t.seconds("boot_s", 60.0, min=0.001)
    post_ui_s = t.seconds("post_ui_s", 0.05)
    t.done()

    stages = parse_stages(root)
    analysis = _analysis(root.table("analysis")) if root.has("analysis") else AnalysisOptions()
    influx = parse_settings(root.table("influx"), base) if root.has("influx") else None
    soak = _soak(root.table("soak")) if root.has("soak") else None
    qemu = root.table("qemu") if root.has("qemu") else None
    root.done()
    if console.port == "sim" and sim is None:
        raise ConfigError(f"{path}: key 'console.port': port 'sim' needs a [sim] table")

    raw = dict(data)
    if board:
        raw.setdefault("sim", {})
        raw["sim"] = {**raw["sim"], "profile": str(board)}
    return RigConfig(
        path=path,
        rig=rig_name,
        board=str(board_name or "unknown"),
        variant=str(variant or "default"),
        results_dir=results_dir,
        power=power,
        console=console,
        analyzer=analyzer,
        sim=sim,
        boot_timeout_s=boot_timeout_s,
        post_ui_s=post_ui_s,
        stages=stages,
        raw=raw,
        influx=influx if influx and influx.enabled else None,
        soak=soak,
        qemu=qemu,
        analysis=analysis,
        target=target,
        budgets=budgets,
    )


def _analysis(t: Table) -> AnalysisOptions:
    """`[analysis]` (docs/analysis.md), checked here so a mistake names this file."""
    try:
        return AnalysisOptions.from_mapping(t.data)  # which rejects unknown keys
    except InputError as e:
        raise ConfigError(f"{t.path}: {e}") from None


def _fault_rates(t: Table) -> str:
    """`[sim.faults]` as the JSON text `rig sim serve --faults` takes."""
    from simboard.faults import FaultSpecError, parse_rates

    try:
        rates = parse_rates(t.data)  # which checks every key
    except FaultSpecError as e:
        t.error(e.key, e.expected, e.found)
    return rates.to_json()


def _sim_knobs(s: Table) -> dict[str, str]:
    """`[sim] kernel_args` and `uboot_env` as `rig sim serve` takes them, checked here so a
    mistake names this file and key (docs/simulator.md, "Knobs")."""
    if not (s.has("kernel_args") or s.has("uboot_env")):
        return {}  # the simulator's modules load only when needed
    from simboard.knobs import SettingError, check_args, check_env

    out: dict[str, str] = {}
    try:
        if s.has("kernel_args"):
            out["kernel_args"] = check_args(s.raw("kernel_args"))
        if s.has("uboot_env"):
            out["uboot_env"] = json.dumps(check_env(s.raw("uboot_env")))
    except SettingError as e:
        s.error(e.key, e.expected, e.found)
    return out


def _soak(t: Table) -> SoakConfig:
    cycles = t.int("cycles", None, min=1)
    duration = t.float("duration_s", None, min=0.001, max=366 * 86400.0)
    rate = t.float("max_failure_rate", 0.0, min=0.0)
    if rate > 1.0:
        t.error("max_failure_rate", "a fraction between 0 and 1", rate)
    out = SoakConfig(
        cycles=cycles,
        duration_s=duration,
        max_failure_rate=rate,
        max_consecutive_rig_errors=t.int("max_consecutive_rig_errors", 5, min=1),
        console_reopen_s=t.seconds("console_reopen_s", 5.0),
    )
    t.done()
    return out
