"""What the instruments recorded, as the analysis reads it: a capture's markers, the
console's reads, a supply's readings."""

from __future__ import annotations

from dataclasses import dataclass, field

from rig.model.codec import opt


@dataclass(frozen=True)
class MarkerScan:
    """What a capture says about the power rail and the marker channels.

    Sample numbers count from the first sample of the capture. A power-up is the first
    sample of a rising edge after which the rail stays high for the debounce time; a
    marker edge is the first sample at the new level (hooks toggle, so both directions
    count).
    """

    samplerate: int
    samples: int
    channels: tuple[str, ...]
    power_up: tuple[int, ...]
    power_down: tuple[int, ...]
    edges: dict[str, tuple[int, ...]] = field(default_factory=dict)
    bounces: int = 0  # rail transitions rejected by the debounce
    warnings: tuple[str, ...] = ()  # the decoder's warnings (marker before power-up, ...)
    engine: str = "sigrok"
    #: False: the capture has no power channel, so t = 0 is its first sample (power_up
    #: is then (0,): a stand-in, not an observed edge).
    power_channel: bool = True
    #: Channels that toggled faster than any boot signal (floating, mis-mapped): name ->
    #: sample where that was found. Not decoded; their edges are empty.
    dense: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    """One read from the console: host CLOCK_MONOTONIC ns of arrival and the raw bytes."""

    t_ns: int
    data: bytes


@dataclass(frozen=True)
class PowerReading:
    """One line of power.jsonl (docs/contract.md): host CLOCK_MONOTONIC ns, volts,
    amperes; the visa driver adds when it asked for the current and when the answer came
    (`t_ns` is their midpoint)."""

    t_ns: int
    v: float
    a: float
    t_req_ns: int | None = opt()
    t_ans_ns: int | None = opt()
