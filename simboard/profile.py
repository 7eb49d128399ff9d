"""Board profiles (`config/boards/*.toml`): load, validate, override.

The schema is documented in docs/simulator.md. Every error names the file, the key,
what was expected and what was found (rig.config.tomlcheck does the typed access).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from rig.config.tomlcheck import Table
from rig.errors import ConfigError
from simboard.instrumentation import Instrumentation
from simboard.instrumentation import parse as parse_instrumentation
from simboard.knobs import Board, Settings, board, check_args, check_env, stages_as_run
from simboard.steps import (
    Calibrate,
    Cmdline,
    KernelStart,
    Marker,
    Rest,
    RootDelay,
    SimStep,
    Text,
    parse_step,
)

BOARD_SCHEMA = "bootrig.board/1"

STAGES = ("bootloader", "kernel", "rootfs_mount", "init", "application")
#: What ends each stage: a marker's GPIO edge, or the first byte of a console line.
STAGE_ENDS: dict[str, tuple[str, str]] = {
    "bootloader": ("marker", "bootm"),
    "kernel": ("marker", "do_mount_root"),
    "rootfs_mount": ("marker", "kernel_init"),
    "init": ("line", "Starting application"),
    "application": ("marker", "ui_ready"),
}


@dataclass(frozen=True)
class Stage:
    name: str
    duration_s: float
    sigma: float
    steps: tuple[SimStep, ...]
    current_a: float = 0.3  # what the board draws from the supply in this stage


@dataclass(frozen=True)
class BoardInfo:
    name: str
    variant: str
    description: str


@dataclass(frozen=True)
class ConsoleSpec:
    baud: int
    usb_latency_ms: float
    usb_buffer_bytes: int


@dataclass(frozen=True)
class PowerSpec:
    relay_channel: int
    relay_channels: int
    relay_delay_ms: float
    bounce_ms: tuple[float, float]
    bounce_opens: tuple[int, int]
    #: The rail while the board is unpowered: 0, or the voltage the console adapter's TX
    #: line holds it at through the SoC's protection diodes (back-powering).
    back_power_v: float = 0.0


@dataclass(frozen=True)
class SupplySpec:
    """The SCPI bench supply beside the board (simboard/supply.py, docs/simulator.md)."""

    volts: float  # output set-point at start
    current_limit_a: float  # at start
    current_a: float  # a stage's draw when the stage does not say
    output_ohm: float  # terminal voltage = set-point - output_ohm * current
    on_delay_ms: float  # OUTP ON/OFF to the rail rising/falling
    inrush_a: float  # extra current at the power edge (bulk capacitors charging)
    inrush_ms: float  # its time constant
    ripple: float  # relative amplitude of the activity wobble within a stage
    noise_a: float  # readback noise, 1 sigma
    noise_v: float
    response_ms: float  # query to answer; the reading averages over it
    max_readings_per_s: float  # 0: no limit (a "slow supply" has a few)


@dataclass(frozen=True)
class KernelClock:
    drift_ppm: float
    offset_s: float


@dataclass(frozen=True)
class Profile:
    path: Path
    board: BoardInfo
    console: ConsoleSpec
    power: PowerSpec
    kernel_clock: KernelClock
    stages: tuple[Stage, ...]
    supply: SupplySpec = field(default_factory=lambda: _supply(Table(Path(), {})))
    # quiet / initcall_debug on the kernel command line (simboard.instrumentation)
    instrumentation: Instrumentation = field(default_factory=Instrumentation)
    # `[uboot] silent_console`: CONFIG_SILENT_CONSOLE is built in (`silent` then acts)
    silent_console: bool = False
    # what the rig sets: kernel_args and uboot_env (simboard.knobs)
    settings: Settings = field(default_factory=Settings)

    @property
    def cmdline(self) -> str:
        """The kernel command line as written (the cmdline step's; "" without one)."""
        steps = (s for st in self.stages for s in st.steps)
        return next((s.args for s in steps if isinstance(s, Cmdline)), "")

    def running(self, written: bool = False) -> Board:
        """The board as it boots with the rig's settings, or as written."""
        return board(self.cmdline, Settings() if written else self.settings, self.silent_console)

    def as_run(self, written: bool = False) -> tuple[Stage, ...]:
        """The stages as the board runs them (knobs and instrumentation applied), or
        as written, which budgets the rests (simboard.knobs)."""
        b = self.running(written)
        spec = b.instrumentation(Instrumentation() if written else self.instrumentation)
        run = stages_as_run([st.steps for st in self.stages], b, spec)
        return tuple(
            dataclasses.replace(st, steps=s) for st, s in zip(self.stages, run, strict=True)
        )

    def with_settings(
        self, kernel_args: str | None = None, uboot_env: object | None = None
    ) -> Profile:
        """The same board with the rig's settings (validated: SettingError names the key)."""
        old = self.settings
        return dataclasses.replace(
            self,
            settings=Settings(
                old.kernel_args if kernel_args is None else check_args(kernel_args),
                old.uboot_env if uboot_env is None else check_env(uboot_env),
            ),
        )

    def with_overrides(
        self,
        drift_ppm: float | None = None,
        usb_latency_ms: float | None = None,
        usb_buffer_bytes: int | None = None,
        supply_rate: float | None = None,
        back_power_v: float | None = None,
        quiet: bool | None = None,
        initcall_debug: bool | None = None,
    ) -> Profile:
        """The same board with command-line overrides applied (validated like the file)."""
        p = self
        if quiet is not None or initcall_debug is not None:
            old = p.instrumentation
            p = dataclasses.replace(
                p,
                instrumentation=Instrumentation(
                    quiet=old.quiet if quiet is None else quiet,
                    initcall_debug=old.initcall_debug if initcall_debug is None else initcall_debug,
                ),
            )
        if back_power_v is not None:
            if not 0.0 <= back_power_v <= BACK_POWER_MAX_V:
                want = f"volts within 0..{BACK_POWER_MAX_V:g}"
                raise _bad(p.path, "--back-power-v", want, back_power_v)
            p = dataclasses.replace(
                p, power=dataclasses.replace(p.power, back_power_v=back_power_v)
            )
        if supply_rate is not None:
            if supply_rate < 0:
                raise _bad(p.path, "--supply-rate", "readings per second >= 0", supply_rate)
            p = dataclasses.replace(
                p, supply=dataclasses.replace(p.supply, max_readings_per_s=supply_rate)
            )
        if drift_ppm is not None:
            _check_drift(p.path, "--drift-ppm", drift_ppm)
            p = dataclasses.replace(
                p, kernel_clock=dataclasses.replace(p.kernel_clock, drift_ppm=drift_ppm)
            )
        if usb_latency_ms is not None:
            _check_latency(p.path, "--usb-latency-ms", usb_latency_ms)
            p = dataclasses.replace(
                p, console=dataclasses.replace(p.console, usb_latency_ms=usb_latency_ms)
            )
        if usb_buffer_bytes is not None:
            _check_buffer(p.path, "--usb-buffer-bytes", usb_buffer_bytes)
            p = dataclasses.replace(
                p, console=dataclasses.replace(p.console, usb_buffer_bytes=usb_buffer_bytes)
            )
        return p


#: A back-powered rail sags below the logic's supply: a few volts at most.
BACK_POWER_MAX_V = 5.0


def _bad(path: Path, key: str, expected: str, found: object) -> ConfigError:
    return ConfigError(f"{path}: key '{key}': expected {expected}, found {found!r}")


def _check_drift(path: Path, key: str, v: float) -> None:
    if not -1000.0 <= v <= 1000.0:
        raise _bad(path, key, "a drift in ppm within -1000..1000", v)


def _check_latency(path: Path, key: str, v: float) -> None:
    if not 0.0 < v <= 255.0:
        raise _bad(path, key, "a latency timer in ms within (0, 255]", v)


def _check_buffer(path: Path, key: str, v: int) -> None:
    if not 1 <= v <= 4096:
        raise _bad(path, key, "a buffer size in bytes within 1..4096", v)


def _pair(t: Table, key: str, default: list[float], kind: type, lo: float, hi: float) -> tuple:
    v = t.raw(key, default)
    ok = (
        isinstance(v, list)
        and len(v) == 2
        and all(isinstance(x, kind) and not isinstance(x, bool) for x in v)
        and lo <= v[0] <= v[1] <= hi
    )
    if not ok:
        t.error(key, f"[min, max] with {lo} <= min <= max <= {hi}", v)
    return (kind(v[0]), kind(v[1]))


def _check_stage(path: Path, i: int, stage: Stage, raw_last: object) -> None:
    where = f"stages[{i}].steps"
    rests = sum(isinstance(s, Rest) for s in stage.steps)
    if rests != 1:
        raise _bad(path, where, f"exactly one {{rest = true}} step in stage '{stage.name}'", rests)
    kind, what = STAGE_ENDS[stage.name]
    last = stage.steps[-1]
    ok = (
        isinstance(last, Marker) and last.name == what
        if kind == "marker"
        else isinstance(last, Text)
        and not last.printk
        and last.newline
        and len(last.texts) == 1
        and what in last.texts[0]
    )
    expected = (
        f"stage '{stage.name}' to end with {{marker = \"{what}\"}}"
        if kind == "marker"
        else f"stage '{stage.name}' to end with one plain {{line = \"...{what}...\"}}"
    )
    if not ok:
        raise _bad(path, f"{where}[{len(stage.steps) - 1}]", expected, raw_last)


def _supply(t: Table) -> SupplySpec:
    def num(key: str, default: float, hi: float) -> float:
        v = t.float(key, default, min=0.0)
        if v > hi:
            t.error(key, f"a number within 0..{hi:g}", v)
        return float(v)

    spec = SupplySpec(
        volts=num("volts", 5.0, 30.0),
        current_limit_a=num("current_limit_a", 3.0, 10.0),
        current_a=num("current_a", 0.3, 10.0),
        output_ohm=num("output_ohm", 0.05, 1.0),
        on_delay_ms=num("on_delay_ms", 1.0, 100.0),
        inrush_a=num("inrush_a", 0.5, 10.0),
        inrush_ms=num("inrush_ms", 0.4, 100.0),
        ripple=num("ripple", 0.05, 0.5),
        noise_a=num("noise_a", 0.002, 1.0),
        noise_v=num("noise_v", 0.001, 1.0),
        response_ms=num("response_ms", 1.0, 1000.0),
        max_readings_per_s=num("max_readings_per_s", 0.0, 100000.0),
    )
    if spec.response_ms <= 0:
        t.error("response_ms", "a response time > 0", spec.response_ms)
    t.done()
    return spec


def _stages(root: Table, default_a: float) -> tuple[Stage, ...]:
    tables = root.tables("stages")
    names = [st.data.get("name") for st in tables]
    if names != list(STAGES):
        raise _bad(root.path, "stages", f"stages named {list(STAGES)} in this order", names)
    stages: list[Stage] = []
    kernel_started = False
    seen_markers: set[str] = set()
    once: set[type] = set()  # the kernel prints its command line once, calibrates once...
    for i, st in enumerate(tables):
        name = st.str("name")
        duration = st.float("duration_s", min=0.0)
        sigma = st.float("sigma", 0.0, min=0.0)
        if sigma > 0.25:
            st.error("sigma", "a relative sigma within 0..0.25", sigma)
        current = st.float("current_a", default_a, min=0.0)
        raw_steps = st.tables("steps")
        if not raw_steps:
            st.error("steps", "a non-empty array of step tables", [])
        steps: list[SimStep] = []
        for step_t in raw_steps:
            step = parse_step(step_t, kernel_started)
            if isinstance(step, KernelStart):
                if kernel_started:
                    step_t.error("kernel_start", "one kernel_start step per profile", True)
                kernel_started = True
            if isinstance(step, Marker):
                if step.name in seen_markers:
                    step_t.error("marker", "each marker once per profile", step.name)
                seen_markers.add(step.name)
            if isinstance(step, Cmdline | Calibrate | RootDelay):
                if type(step) in once:
                    step_t.error(type(step).__name__.lower(), "one such step per profile", True)
                once.add(type(step))
            steps.append(step)
        st.done()
        stage = Stage(name, duration, sigma, tuple(steps), current)
        _check_stage(root.path, i, stage, raw_steps[-1].data)
        stages.append(stage)
    if not kernel_started:
        raise _bad(root.path, "stages", "one {kernel_start = true} step", "none")
    return tuple(stages)


def parse(path: Path, data: dict) -> Profile:
    """Validate a parsed profile (schema only; `load` also checks the stage budgets)."""
    root = Table(path, data)
    schema = root.str("schema", BOARD_SCHEMA)
    if schema != BOARD_SCHEMA:
        root.error("schema", repr(BOARD_SCHEMA), schema)

    b = root.table("board", required=True)
    board = BoardInfo(
        name=b.str("name"),
        variant=b.str("variant", "default"),
        description=b.str("description", ""),
    )
    b.done()

    c = root.table("console")
    console = ConsoleSpec(
        baud=c.int("baud", 115200, min=50),
        usb_latency_ms=c.float("usb_latency_ms", 16.0),
        usb_buffer_bytes=c.int("usb_buffer_bytes", 62),
    )
    _check_latency(path, "console.usb_latency_ms", console.usb_latency_ms)
    _check_buffer(path, "console.usb_buffer_bytes", console.usb_buffer_bytes)
    c.done()

    p = root.table("power")
    channels = p.int("relay_channels", 4, min=1)
    channel = p.int("relay_channel", 1, min=1)
    if channel > channels:
        p.error("relay_channel", f"a channel within 1..relay_channels ({channels})", channel)
    power = PowerSpec(
        relay_channel=channel,
        relay_channels=channels,
        relay_delay_ms=p.float("relay_delay_ms", 5.0, min=0.0),
        # Gaps stay well under 1 ms so a 1 ms debounce sees one clean edge.
        bounce_ms=_pair(p, "bounce_ms", [0.3, 1.0], float, 0.0, 1.0),
        bounce_opens=_pair(p, "bounce_opens", [1, 3], int, 0, 10),
        back_power_v=p.float("back_power_v", 0.0, min=0.0, max=BACK_POWER_MAX_V),
    )
    if power.bounce_opens[1] > 0 and power.bounce_ms[0] <= 0.0:
        p.error(
            "bounce_ms", "a duration > 0 when bounce_opens allows bounces", list(power.bounce_ms)
        )
    p.done()

    k = root.table("kernel_clock")
    clock = KernelClock(
        drift_ppm=k.float("drift_ppm", 0.0), offset_s=k.float("offset_s", 0.0, min=0.0)
    )
    _check_drift(path, "kernel_clock.drift_ppm", clock.drift_ppm)
    k.done()

    supply = _supply(root.table("supply"))
    stages = _stages(root, supply.current_a)
    instrumentation = parse_instrumentation(root.table("instrumentation"))
    u = root.table("uboot")
    silent_console = u.bool("silent_console", False)
    u.done()
    root.done()
    return Profile(
        path, board, console, power, clock, stages, supply, instrumentation, silent_console
    )
