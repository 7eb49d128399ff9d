"""The console's sections of a report: `uboot`, `kernel`, `systemd`, `app_events`,
`phases` and `modules` (shapes in docs/analysis.md). Fields are in the order report.json
writes them; a `Point` is a console line on the reference clock."""

from __future__ import annotations

from dataclasses import dataclass

from rig.model.codec import JSONObject, internal, rest


@dataclass
class Phase:
    """A timed sub-phase of a stage; `detail` holds its kind's own fields."""

    stage: str  # bootloader | kernel | userspace
    kind: str
    name: str
    line: int
    end_line: int | None
    start_s: float | None
    duration_s: float  # the work
    observed_s: float | None  # between its two pieces of evidence, console time included
    bound: str  # measured (the evidence brackets the work) | upper_bound (it brackets more)
    source: str  # printk | host | uart | ... | uboot (U-Boot's own timer)
    uncertainty_s: float | None
    detail: JSONObject = rest()
    #: Byte offsets (a, b) of its evidence: the silences between them are this phase's.
    offsets: tuple[int, int] | None = internal()


@dataclass
class Point:
    line: int
    t_s: float
    source: str


@dataclass
class Banner(Point):
    version: str
    phase: str  # SPL, TPL, VPL or U-Boot
    build: str | None


@dataclass
class Autoboot(Point):
    bootdelay: int
    counts: list[int]
    measured_s: float | None


@dataclass
class Image:
    line: int
    format: str
    part: str
    address: str
    size_bytes: int | None
    compression: str | None
    fields: dict[str, str]


@dataclass
class BootstageRow:
    stage: str  # "" when U-Boot had no name for the record
    mark_s: float  # since reset
    elapsed_s: float  # since the previous mark
    line: int = internal(0)


@dataclass
class BootstageTotal:
    """A repeated stage's total (driver model, ...)."""

    stage: str
    total_s: float


@dataclass
class Bootstage:
    """U-Boot's CONFIG_BOOTSTAGE_REPORT table, on its own timer; `line`: its header."""

    line: int
    records: int | None  # as the header declares it (newer U-Boot only)
    rows: list[BootstageRow]
    accumulated: list[BootstageTotal]


@dataclass
class UBootSection:
    banners: list[Banner]
    autoboot: Autoboot | None
    images: list[Image]
    steps: list[Phase]
    bootstage: list[Bootstage]
    starting_kernel: Point | None
    extra: JSONObject = rest()


@dataclass
class Cmdline:
    line: int
    text: str
    args: dict[str, str | None]  # bare flags map to null


@dataclass
class RootMount(Point):
    fstype: str
    device: str
    readonly: bool


@dataclass
class FreeingInit(Point):
    kib: int
    what: str


@dataclass
class RunInit(Point):
    path: str


@dataclass
class Panic(Point):
    reason: str


@dataclass
class AsyncWait:
    """A thread blocked on async work (async_synchronize_*), by the kernel's measure."""

    pid: int
    start_s: float
    duration_s: float
    source: str
    line: int


@dataclass
class ModuleNote:
    line: int
    text: str


@dataclass
class KernelSection:
    version: str | None
    cmdline: Cmdline | None
    calibrate_delay: list[Phase]
    root_waits: list[Phase]
    usb: list[Phase]
    root_mount: RootMount | None
    freeing_init: FreeingInit | None
    run_init: RunInit | None
    async_waits: list[AsyncWait]
    module_notes: list[ModuleNote]
    panic: Panic | None
    extra: JSONObject = rest()


@dataclass
class Startup(Point):
    """systemd's `Startup finished in ...`: its parts by label (`total` when unnamed)."""

    parts: dict[str, float]
    total_s: float | None
    scope: str  # system | user


@dataclass
class TargetReached(Point):
    target: str


@dataclass
class TargetTime:
    line: int
    target: str
    userspace_s: float


@dataclass
class FailedUnit(Point):
    unit: str
    unit_id: str | None


@dataclass
class SystemdSection:
    startup: Startup | None
    targets_reached: list[TargetReached]
    target_times: list[TargetTime]
    units: list[Phase]
    failed: list[FailedUnit]
    extra: JSONObject = rest()


@dataclass
class AppEvent:
    """A match of a user's `[analysis] app_events` pattern."""

    name: str
    t_s: float
    source: str
    uncertainty_s: float
    line: int
    text: str
    groups: dict[str, str | None]


@dataclass
class ModuleTime:
    """A module's initcalls together (`module` null: the built-in ones)."""

    module: str | None
    initcalls: int
    duration_s: float
    start_s: float
    source: str
    slowest: str
