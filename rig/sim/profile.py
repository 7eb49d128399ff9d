"""Board profiles (`config/boards/*.toml`): load, validate, override.

The schema is documented in docs/simulator.md. Every error names the file, the key,
what was expected and what was found (rig.tomlcheck does the typed access).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from rig.sim.steps import KernelStart, Marker, Rest, Step, Text, parse_step
from rig.tomlcheck import ConfigError, Table, load_toml

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
    steps: tuple[Step, ...]


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

    def with_overrides(
        self,
        drift_ppm: float | None = None,
        usb_latency_ms: float | None = None,
        usb_buffer_bytes: int | None = None,
    ) -> Profile:
        """The same board with command-line overrides applied (validated like the file)."""
        p = self
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


def _stages(root: Table) -> tuple[Stage, ...]:
    tables = root.tables("stages")
    names = [st.data.get("name") for st in tables]
    if names != list(STAGES):
        raise _bad(root.path, "stages", f"stages named {list(STAGES)} in this order", names)
    stages: list[Stage] = []
    kernel_started = False
    seen_markers: set[str] = set()
    for i, st in enumerate(tables):
        name = st.str("name")
        duration = st.float("duration_s", min=0.0)
        sigma = st.float("sigma", 0.0, min=0.0)
        if sigma > 0.25:
            st.error("sigma", "a relative sigma within 0..0.25", sigma)
        raw_steps = st.tables("steps")
        if not raw_steps:
            st.error("steps", "a non-empty array of step tables", [])
        steps: list[Step] = []
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
            steps.append(step)
        st.done()
        stage = Stage(name=name, duration_s=duration, sigma=sigma, steps=tuple(steps))
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

    stages = _stages(root)
    root.done()
    return Profile(path, board, console, power, clock, stages)


def load(path: Path) -> Profile:
    """Load and fully validate a board profile, including that every stage's rest >= 0."""
    path = Path(path)
    profile = parse(path, load_toml(path))
    # Lazy import: the budget check runs the timeline, which itself imports this module.
    from rig.sim.timeline import rests

    rests(profile)
    return profile
