"""A boot's report: what report.json holds (schema bootrig.report/1, docs/contract.md
"report.json"; every key in docs/artifacts.md).

Analysis builds a `Report`; report.json, the terminal, report.html, InfluxDB, Robot and
the soak read one. Only rig/artifacts/rundir.py reads or writes the file. The console's
sections are in rig/model/sections.py, the clocks in rig/model/clocks.py. Keys this rig
does not know are kept (`extra`) and written back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rig import names
from rig.errors import ArtifactError
from rig.model.clocks import Clocks, Pacing, PowerClock, UartTap, UartTapFailed
from rig.model.codec import JSONObject, dump, internal, key, load, opt, rest
from rig.model.knob import Knob, Verified
from rig.model.landmarks import LandmarkCalibrations
from rig.model.sections import (
    AppEvent,
    KernelSection,
    ModuleTime,
    Phase,
    SystemdSection,
    UBootSection,
)
from rig.outcomes import BootOutcome

#: The report schemas this rig reads; it writes the first.
READS = (names.REPORT_SCHEMA,)


@dataclass
class Boundary:
    """The event a stage starts or ends at."""

    event: str
    source: str
    uncertainty_s: float | None
    landmark: str | None = opt()
    extra: JSONObject = rest()


@dataclass
class Stage:
    """One stage on the reference clock; None where the boot never got there. The
    energy fields appear when a supply read back (docs/instruments.md)."""

    name: str
    start_s: float | None = None
    end_s: float | None = None
    duration_s: float | None = None
    source: str | None = None
    uncertainty_s: float | None = None
    start: Boundary | None = None
    end: Boundary | None = None
    note: str | None = None
    energy_j: float | None = opt()
    energy_uncertainty_j: float | None = opt()
    mean_current_a: float | None = opt()
    peak_current_a: float | None = opt()
    energy_readings: int | None = opt()
    extra: JSONObject = rest()

    @property
    def reached(self) -> bool:
        return self.duration_s is not None


@dataclass
class Event:
    """A marker edge or console anchor; `extra` holds what its source adds (`sample`,
    `line`, `text`, `landmark`, ...). The analysis also keeps the clock it was read on and
    splits its uncertainty into what that clock shares between events and what is its
    own, so a stage between two events on one clock is not charged twice."""

    name: str
    t_s: float
    source: str
    uncertainty_s: float | None = None  # against the reference clock
    extra: JSONObject = rest()
    clock: str = internal("")  # "analyzer", "printk", "host", "command"
    quant_s: float = internal(0.0)  # its quantization (shared grid: differences stay within it)
    own_s: float = internal(0.0)  # its independent scatter
    rate_u: float = internal(0.0)  # relative rate error of its clock against the reference


@dataclass
class TimeBase:
    """Where t = 0 is: the analyzer's power edge, or the host's power-on command."""

    reference: str  # "analyzer" | "host"
    t0: str
    clock: str | None = opt()
    samplerate_hz: int | None = opt()
    power_edge_sample: int | None = opt()
    power_on_ns: int | None = opt()
    extra: JSONObject = rest()


@dataclass
class ConsoleSummary:
    lines: int
    bytes: int
    chunks: int
    baud: int
    uart_tap: UartTap | UartTapFailed | None = None
    pacing: Pacing | None = None
    extra: JSONObject = rest()


@dataclass
class CaptureSummary:
    samples: int
    samplerate_hz: int
    channels: list[str]
    power_ups: int
    bounces_rejected: int
    dense_channels: dict[str, int] = field(default_factory=dict)
    engine: str = "sigrok"
    channel_map: dict[str, str] | None = opt()  # `rig analyze --map`: how it was read
    extra: JSONObject = rest()


@dataclass
class ConsoleTime:
    """When console line `line` (0-based) was sent, on the reference clock."""

    line: int
    t_s: float
    source: str
    uncertainty_s: float | None


@dataclass
class Initcall:
    """One initcall (`initcall_debug`): start on the reference clock, duration as the
    kernel measured it; `returned` false when its return line never came."""

    name: str
    function: str | None = None  # __initstub__kmod_* names resolved
    module: str | None = None
    start_s: float | None = None
    duration_s: float | None = None
    printk_span_s: float | None = None
    return_code: int | None = key("return")
    source: str | None = None
    uncertainty_s: float | None = None
    async_cookie: int | None = None
    pid: int | None = None
    line: int | None = None
    end_line: int | None = None
    returned: bool = True
    extra: JSONObject = rest()


@dataclass
class Evidence:
    line: int | None = None
    text: str | None = None
    t_s: float | None = None
    source: str | None = None
    extra: JSONObject = rest()


@dataclass
class Advisory:
    rule: str
    title: str
    gain_s: float | None = None
    #: "measured": this boot spent exactly that; "estimate": computed from counts (bytes
    #: x character time); "upper_bound": the most it could give (the work may be needed).
    gain_kind: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    evidence_s: float | None = opt()  # the time the evidence itself shows (basis says how)
    basis: str | None = opt()  # what evidence_s is, in words
    advice: str | None = opt()  # what to change, for people
    detail: JSONObject | None = opt()  # the rule's own figures
    knob: Knob | None = opt()  # the setting that applies it (rig/model/knob.py)
    verified: Verified | None = opt()  # what `rig try` measured the knob to gain
    extra: JSONObject = rest()

    @property
    def knob_key(self) -> tuple[str, str | None]:
        """The advisory as `rig try` names it across analyses: its rule and knob setting."""
        return self.rule, self.knob.label if self.knob is not None else None


@dataclass
class TopItem:
    """One of the boot's largest costs, ranked."""

    rank: int
    kind: str
    stage: str | None
    name: str
    duration_s: float
    start_s: float | None = None
    source: str | None = None
    line: int | None = None
    extra: JSONObject = rest()


@dataclass
class Silence:
    """Console time no line accounts for."""

    line: int | None
    stage: str | None
    name: str
    start_s: float | None
    duration_s: float
    source: str | None = None
    uncertainty_s: float | None = None
    extra: JSONObject = rest()


@dataclass
class Unattributed:
    total_s: float
    by_stage: dict[str, float] = field(default_factory=dict)
    min_s: float | None = None
    silences: list[Silence] = field(default_factory=list)
    extra: JSONObject = rest()


@dataclass
class PowerSummary:
    """A bench supply's readings: the boot's energy (`error` when they give none)."""

    readings: int
    error: str | None = opt()
    rate_hz: float | None = opt()
    clock: PowerClock | None = opt()
    reading_time_u_s: float | None = opt()
    late_readings_dropped: int | None = opt()
    stages_energy_j: float | None = opt()
    stages_energy_uncertainty_j: float | None = opt()
    notes: list[str] | None = opt()
    trace: dict[str, list[float]] | None = opt()
    edge_seen_s: list[float] | None = opt()
    extra: JSONObject = rest()


@dataclass
class ColdBoot:
    """Whether the boot started from a rail that was truly off (docs/cold-boot.md):
    how long the rail was down before the power-on, how fast it rose, where it sat while
    off. `true_cold_boot` null: the artifacts cannot tell (`reasons` says what is
    missing); false: the boot is flagged and kept out of statistics unless asked."""

    off_time_s: float | None
    off_time_uncertainty_s: float | None
    off_time_source: str | None  # supply, capture, relay
    off_time_bound: str | None  # null: an estimate +- its uncertainty; "upper", "lower"
    rise_time_s: float | None  # 10-90 %, an upper bound from the supply's readings
    rise_time_source: str | None
    rail_min_v: float | None  # lowest reading across the off-hold
    back_powered: bool | None
    true_cold_boot: bool | None
    reasons: list[str] = field(default_factory=list)
    min_off_s: float | None = None  # the thresholds it was judged by
    rail_off_v: float | None = None
    extra: JSONObject = rest()


@dataclass
class ResetSign:
    """One sign of a reset (rig/analysis/reset.py): `bootloader_banner` and
    `printk_restart` at a console line (placed by its arrival), `power_edge` at a
    capture sample (the rail fell)."""

    sign: str
    t_s: float | None
    source: str | None
    uncertainty_s: float | None
    line: int | None = opt()
    text: str | None = opt()
    sample: int | None = opt()
    printk_from_s: float | None = opt()  # printk_restart: the highest stamp before it
    printk_to_s: float | None = opt()  # and the stamp the clock started again at
    extra: JSONObject = rest()


@dataclass
class Reset:
    """The board started again during the boot (outcome `reset`): when (`bound` null:
    the rail's fall itself; "upper": the new boot's first console line, the reset came
    at or before it and after `after_s`), in which stage, by which signs."""

    t_s: float | None
    uncertainty_s: float | None
    source: str | None
    bound: str | None
    after_s: float | None
    stage: str | None  # the stage it cut short (null: after the last stage's end)
    lines_after: int  # console lines of the next boot, not timed as this one
    signs: list[ResetSign] = field(default_factory=list)
    extra: JSONObject = rest()


@dataclass
class AnalysisInfo:
    rig_version: str | None = None
    notes: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)  # contradictions: invalid_artifacts
    rig_error: str | None = None  # what failed, when the rig did
    landmarks: LandmarkCalibrations | None = opt()  # the calibrations landmarks took
    extra: JSONObject = rest()


@dataclass(kw_only=True)
class Report:
    """One boot, analyzed. `outcome` is the contract string (`ok`, `hang_in_kernel`,
    ...); `boot_outcome` parses it."""

    schema: str = names.REPORT_SCHEMA
    run_id: str | None = None
    rig: str | None = None
    board: str | None = None
    variant: str | None = None
    started_utc: str | None = None
    power_on_utc: str | None = None
    outcome: str
    power_to_ui_s: float | None = None
    power_to_ui_uncertainty_s: float | None = None
    stages: list[Stage] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    time_base: TimeBase | None = None
    clocks: Clocks = field(default_factory=Clocks)
    console: ConsoleSummary | None = None
    capture: CaptureSummary | None = None
    console_times: list[ConsoleTime] = field(default_factory=list)
    initcalls: list[Initcall] = field(default_factory=list)
    modules: list[ModuleTime] = field(default_factory=list)
    top: list[TopItem] = field(default_factory=list)
    advisories: list[Advisory] = field(default_factory=list)
    uboot: UBootSection | None = None
    kernel: KernelSection | None = None
    systemd: SystemdSection | None = None
    app_events: list[AppEvent] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    unattributed: Unattributed | None = None
    artifacts: dict[str, str] = field(default_factory=dict)
    analysis: AnalysisInfo = field(default_factory=AnalysisInfo)
    power: PowerSummary | None = opt()
    cold_boot: ColdBoot | None = opt()
    reset: Reset | None = opt()  # the board started again during the boot
    place: str | None = opt()  # the labgrid place booted (run.json `place.name`)
    extra: JSONObject = rest()

    @classmethod
    def from_json(cls, obj: Any) -> Report:
        """ArtifactError names the key that does not fit; an unknown schema is refused
        (a later major version may mean other things by the same keys)."""
        schema = obj.get("schema") if isinstance(obj, dict) else None
        if schema not in READS:
            raise ArtifactError(f"key 'schema': expected {READS[0]!r}, found {schema!r}")
        report = load(cls, obj)
        try:
            BootOutcome.parse(report.outcome)
        except ValueError as e:
            raise ArtifactError(f"key 'outcome': {e}") from None
        return report

    def to_json(self) -> dict[str, Any]:
        return dump(self)

    @property
    def boot_outcome(self) -> BootOutcome:
        return BootOutcome.parse(self.outcome)

    @property
    def not_cold(self) -> bool:
        """The evidence says this was not a true cold boot: flagged, kept out of
        statistics unless asked (null evidence is not a flag)."""
        return self.cold_boot is not None and self.cold_boot.true_cold_boot is False

    def stage(self, name: str) -> Stage | None:
        return next((s for s in self.stages if s.name == name), None)
