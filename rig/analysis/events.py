"""Every time the boot tells us about, on the reference clock, with source and uncertainty.

Sources, best first: `gpio` (analyzer edge, one sample period), `printk` (printk
timestamp through the clock fit), `host` (serial arrival through the host clock map).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rig import names
from rig.analysis.clockfit import Anchor, LinearFit, fit
from rig.analysis.hostclock import HostMap, fit_host, host_only
from rig.analysis.lines import Line
from rig.model import MarkerScan


@dataclass(frozen=True)
class Event:
    name: str
    t_s: float
    source: str
    uncertainty_s: float
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "t_s": self.t_s,
            "source": self.source,
            "uncertainty_s": self.uncertainty_s,
            **self.detail,
        }


@dataclass(frozen=True)
class Timebase:
    """Where t = 0 is and how the other clocks map onto it."""

    reference: str  # "analyzer" | "host"
    power_sample: int | None
    samplerate: int | None
    printk: LinearFit | None
    host: HostMap
    gpio: dict[str, float]  # marker -> first edge after the power edge (seconds)


def gpio_times(scan: MarkerScan, power_sample: int) -> dict[str, float]:
    """First edge of each marker channel after the power edge and before power-down."""
    end = next((s for s in scan.power_down if s > power_sample), None)
    out: dict[str, float] = {}
    for name, edges in scan.edges.items():
        first = next((s for s in edges if s >= power_sample and (end is None or s < end)), None)
        if first is not None:
            out[names.canonical_marker(name)] = (first - power_sample) / scan.samplerate
    return out


def first_tags(lines: list[Line]) -> dict[str, Line]:
    out: dict[str, Line] = {}
    for line in lines:
        if line.tag and line.tag not in out:
            out[line.tag] = line
    return out


def build_timebase(
    scan: MarkerScan | None, lines: list[Line], power_on_ns: int, baud: int
) -> Timebase:
    char_s = 10 / baud
    tags = first_tags(lines)
    if scan is None or not scan.power_up:
        return Timebase(
            "host" if scan is None else "analyzer",
            None,
            None,
            None,
            host_only(power_on_ns, char_s),
            {},
        )
    power = scan.power_up[0]
    gpio = gpio_times(scan, power)
    anchors = [
        Anchor(name, tags[name].printk_ts or 0.0, t)
        for name, t in gpio.items()
        if name in tags and tags[name].printk_ts is not None
    ]
    printk = fit(sorted(anchors, key=lambda a: a.y))
    pairs = [(tags[n].t_ns, t) for n, t in gpio.items() if n in tags]
    if printk:
        pairs += [(ln.t_ns, printk(ln.printk_ts)) for ln in lines if ln.printk_ts is not None]
    host = fit_host(pairs, char_s) or host_only(power_on_ns, char_s)
    return Timebase("analyzer", power, scan.samplerate, printk, host, gpio)


def line_event(name: str, line: Line, tb: Timebase) -> Event:
    """The best time for a console line: its printk stamp if fitted, else its arrival."""
    detail = {"line": line.index, "text": line.text[:200]}
    if line.printk_ts is not None and tb.printk is not None:
        return Event(
            name, tb.printk(line.printk_ts), "printk", tb.printk.uncertainty(line.printk_ts), detail
        )
    return Event(name, tb.host.to_ref(line.t_ns), "host", tb.host.uncertainty_s, detail)


def marker_events(lines: list[Line], tb: Timebase) -> list[Event]:
    """Every marker from every source we have (GPIO edge and its console tag)."""
    events: list[Event] = []
    if tb.power_sample is not None and tb.samplerate:
        u = 1 / tb.samplerate
        events.append(Event("power", 0.0, "gpio", u, {"sample": tb.power_sample}))
        for name, t in sorted(tb.gpio.items(), key=lambda kv: kv[1]):
            events.append(Event(name, t, "gpio", u))
    elif tb.reference == "host":
        # No capture: t = 0 is the power-on command; the relay's own delay is unknown.
        events.append(
            Event("power", 0.0, "host", tb.host.uncertainty_s, {"t0": "power-on command"})
        )
    for name, line in first_tags(lines).items():
        events.append(line_event(name, line, tb))
    return events
