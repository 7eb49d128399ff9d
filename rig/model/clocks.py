"""How a report's clocks were mapped onto t = 0 (report.json `clocks`), the console's
pacing verdict and what the UART tap gave (docs/artifacts.md)."""

from __future__ import annotations

from dataclasses import dataclass

from rig.model.codec import JSONObject, internal, opt, rest


@dataclass
class ClockAnchor:
    name: str
    printk_s: float
    ref_s: float
    late_s: float | None = opt()  # a late anchor's bound


@dataclass
class PrintkFit:
    """`ref = offset_s + slope * printk_s`; a console-only run's is the lower envelope
    of arrivals (`model` says which), with its `uncertainty_s`."""

    model: str
    offset_s: float
    slope: float
    drift_ppm: float
    anchors: list[ClockAnchor]
    rejected: list[ClockAnchor]
    late_anchors: list[ClockAnchor]
    drift_uncertainty_ppm: float
    bias_uncertainty_s: float
    residuals_s: list[float]
    rms_residual_s: float
    scatter_s: float
    uncertainty_s: float | None = opt()
    printk_ref_s: float | None = opt()  # slope 1: where the offset was read
    extra: JSONObject = rest()


@dataclass
class Pacing:
    """Whether the console's bytes took their wire time (docs/analysis.md)."""

    verdict: str  # paced | unpaced | unknown (no stretch busy enough to tell)
    source: str  # reads (host arrivals) | uart (the tapped line)
    baud: int
    bytes: int
    wire_s: float  # what the baud rate needs for every byte
    span_s: float  # first read to last read
    deficit_s: float  # the most any stretch of bytes arrived ahead of the baud rate
    slack_s: float  # how far ahead latency and late reads can explain
    window: list[int] | None  # byte offsets of that stretch
    #: the fastest stretch needing 3 slacks of wire time (bytes/s): near the line rate
    #: on a paced console, far above it on an unpaced one
    bytes_per_s: float | None
    line_bytes_per_s: float | None
    extra: JSONObject = rest()

    @property
    def paced(self) -> bool:
        return self.verdict == "paced"


@dataclass
class ReadBound:
    """How late the host read the console (run.json `console_reader`, or assumed): every
    read by at most `bound_s`, except the late lines', each by at most its `lines` entry
    (the reader woke late for them)."""

    bound_s: float
    measured: bool  # the bound is the reader's own, not assumed
    late_lines: list[int]
    late_max_s: float
    lines: dict[int, float] = internal(factory=dict)  # late line -> late by at most


@dataclass
class HostFit:
    """The host clock's latency band: `ref = arrival_s - delay`."""

    model: str
    low_s: float
    high_s: float
    spread_s: float
    anchors: int
    rejected: int
    latencies_s: list[float]
    uncertainty_s: float
    pacing: Pacing | None
    queued_lines: int
    queue_max_s: float
    held_lines: int
    late_lines: int
    garbled_stamps: list[int]
    reads: ReadBound
    extra: JSONObject = rest()


@dataclass
class Clocks:
    host: HostFit | None = opt()
    printk: PrintkFit | None = opt()
    extra: JSONObject = rest()


@dataclass
class UartTap:
    """What the tapped UART gave; `UartTapFailed` when its decode failed."""

    bytes: int
    baud: int | None
    baud_detected: bool
    frame_errors: int
    lines_timed: int


@dataclass
class UartTapFailed:
    error: str


@dataclass
class PowerClock:
    """How a supply's readings were placed on the reference clock (docs/power.md):
    reference seconds = (host ns - zero_ns) / 1e9, good to `uncertainty_s`."""

    source: str  # host | console | power_edge | console+power_edge
    uncertainty_s: float
    zero_ns: float = internal(0.0)
