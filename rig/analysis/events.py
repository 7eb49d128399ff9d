"""Every time the boot tells us about, on the reference clock, with source and uncertainty.

Sources, best first: `gpio` (analyzer edge, one sample period), `uart` (the console
decoded from the analyzer's uart_tx channel, sample-accurate), `printk` (printk
timestamp through the clock fit), `host` (serial arrival through the host clock map).

Each event also names the clock it was read on and splits its uncertainty into what
that clock shares between events (its offset onto the reference) and what is its own
(quantization, scatter), so a stage between two events on one clock is not charged
twice for the shared offset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rig import names
from rig.analysis.clockfit import (
    PRINTK_RESOLUTION_S,
    Anchor,
    LinearFit,
    envelope_fit,
    fit,
)
from rig.analysis.hostclock import HostMap, fit_host, host_only
from rig.analysis.lines import Line
from rig.analysis.uartlines import match_lines
from rig.artifacts.uart import UartBytes
from rig.model import MarkerScan

#: Console-only runs: t = 0 is the power-on command, and the time from the command to
#: the rail rising (USB, relay coil, contacts) is not observed. Mechanical relays in
#: USB modules switch within about 15 ms.
RELAY_DELAY_BOUND_S = 15e-3


@dataclass(frozen=True)
class Event:
    name: str
    t_s: float
    source: str
    uncertainty_s: float  # against the reference clock
    detail: dict[str, Any] = field(default_factory=dict)
    clock: str = ""  # the clock the time was read on ("analyzer", "printk", "host")
    quant_s: float = 0.0  # its quantization (shared grid: differences stay within it)
    own_s: float = 0.0  # its independent scatter
    rate_u: float = 0.0  # relative rate error of its clock against the reference

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "t_s": self.t_s,
            "source": self.source,
            "uncertainty_s": self.uncertainty_s,
            **self.detail,
        }


def interval_uncertainty(a: Event, b: Event) -> float:
    """Uncertainty of b - a: on one clock the shared offset cancels."""
    if a.clock and a.clock == b.clock and a.clock != "host":
        rate = max(a.rate_u, b.rate_u) * abs(b.t_s - a.t_s)
        return max(a.quant_s, b.quant_s) + math.hypot(a.own_s, b.own_s) + rate
    return math.hypot(a.uncertainty_s, b.uncertainty_s)


@dataclass(frozen=True)
class Timebase:
    """Where t = 0 is and how the other clocks map onto it."""

    reference: str  # "analyzer" | "host"
    power_sample: int | None
    samplerate: int | None
    printk: LinearFit | None
    host: HostMap
    gpio: dict[str, float]  # marker -> first edge after the power edge (seconds)
    uart: dict[int, float] = field(default_factory=dict)  # line index -> first start bit
    tag_delay: tuple[float, float] | None = None  # GPIO -> tag's first byte: median, spread


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


def _console_only(lines: list[Line], power_on_ns: int, char_s: float) -> Timebase:
    """No capture: the host clock is the reference (t = 0 at the power-on command).

    printk stamps are mapped by the lower envelope of their arrivals; the spread of the
    arrivals above it is the latency band that lines without a stamp get."""
    base = power_on_ns / 1e9
    pk = [
        Anchor(f"line {ln.index}", ln.printk_ts, ln.t_ns / 1e9 - base)
        for ln in lines
        if ln.printk_ts is not None
    ]
    env = envelope_fit(pk, 0.0)
    if env is None or len(pk) < 3:
        return Timebase("host", None, None, None, host_only(power_on_ns, char_s), {})
    host = fit_host([(int((a.y + base) * 1e9), env(a.x)) for a in pk], char_s)
    assert host is not None
    # The envelope runs through the least-latency arrivals; those lines left the target
    # at least one character time before they arrived.
    lead = [Anchor(a.name, a.x, a.y - char_s) for a in pk]
    return Timebase("host", None, None, envelope_fit(lead, host.uncertainty_s), host, {})


#: A tag's first byte follows its GPIO toggle by the hook's print path; with a single
#: calibration pair the spread of that delay is unknown, so assume this much.
PRIOR_TAG_SPREAD_S = 50e-6


def _tag_delay(
    gpio: dict[str, float], tags: dict[str, Line], uart: dict[int, float]
) -> tuple[float, float] | None:
    delays = sorted(
        uart[tags[n].index] - t for n, t in gpio.items() if n in tags and tags[n].index in uart
    )
    if not delays:
        return None
    mid = delays[len(delays) // 2]
    spread = max(abs(d - mid) for d in delays) if len(delays) >= 3 else PRIOR_TAG_SPREAD_S
    return mid, spread


def build_timebase(
    scan: MarkerScan | None,
    lines: list[Line],
    power_on_ns: int,
    baud: int,
    uart: UartBytes | None = None,
) -> Timebase:
    char_s = 10 / baud
    tags = first_tags(lines)
    if scan is None:
        return _console_only(lines, power_on_ns, char_s)
    if not scan.power_up:
        return Timebase("analyzer", None, None, None, host_only(power_on_ns, char_s), {})
    power = scan.power_up[0]
    gpio = gpio_times(scan, power)
    anchors = [
        Anchor(name, tags[name].printk_ts or 0.0, t)
        for name, t in gpio.items()
        if name in tags and tags[name].printk_ts is not None
    ]
    printk = fit(sorted(anchors, key=lambda a: a.y))
    tapped = (
        match_lines(lines, uart.data, uart.start, power, scan.samplerate)
        if uart is not None
        else {}
    )
    if tapped:
        # Every tapped line is an exact anchor for the host clock.
        pairs = [(ln.t_ns, tapped[ln.index]) for ln in lines if ln.index in tapped]
    else:
        pairs = [(tags[n].t_ns, t) for n, t in gpio.items() if n in tags]
        if printk:
            pairs += [(ln.t_ns, printk(ln.printk_ts)) for ln in lines if ln.printk_ts is not None]
    host = fit_host(pairs, char_s) or host_only(power_on_ns, char_s)
    return Timebase(
        "analyzer",
        power,
        scan.samplerate,
        printk,
        host,
        gpio,
        tapped,
        _tag_delay(gpio, tags, tapped),
    )


def line_event(name: str, line: Line, tb: Timebase) -> Event:
    """The best time for a console line's first byte: the UART tap, its printk stamp if
    fitted, else its arrival."""
    detail = {"line": line.index, "text": line.text[:200]}
    if line.index in tb.uart and tb.samplerate:
        u = 1 / tb.samplerate
        return Event(name, tb.uart[line.index], "uart", u, detail, "analyzer", u, 0.0)
    if line.printk_ts is not None and tb.printk is not None:
        return _printk_event(name, line, tb, detail)
    return _host_event(name, line, tb, detail)


def _host_event(name: str, line: Line, tb: Timebase, detail: dict[str, Any]) -> Event:
    # Each line's latency is its own: nothing cancels between two host-timed events.
    u = tb.host.uncertainty_s
    return Event(name, tb.host.to_ref(line.t_ns), "host", u, detail, clock="host", own_s=u)


def _printk_event(name: str, line: Line, tb: Timebase, detail: dict[str, Any]) -> Event:
    assert line.printk_ts is not None and tb.printk is not None
    own = 3 * tb.printk.scatter if tb.reference == "analyzer" else 0.0
    return Event(
        name,
        tb.printk(line.printk_ts),
        "printk",
        tb.printk.uncertainty(line.printk_ts),
        detail,
        clock="printk",
        quant_s=PRINTK_RESOLUTION_S,
        own_s=own,
        rate_u=tb.printk.rate_uncertainty,
    )


def marker_events(lines: list[Line], tb: Timebase) -> list[Event]:
    """Every marker from every source we have (GPIO edge and its console tag)."""
    events: list[Event] = []
    if tb.power_sample is not None and tb.samplerate:
        u = 1 / tb.samplerate
        events.append(
            Event("power", 0.0, "gpio", u, {"sample": tb.power_sample}, "analyzer", u, 0.0)
        )
        for name, t in sorted(tb.gpio.items(), key=lambda kv: kv[1]):
            events.append(Event(name, t, "gpio", u, {}, "analyzer", u, 0.0))
    elif tb.reference == "host":
        u = RELAY_DELAY_BOUND_S
        detail = {"t0": "power-on command; the relay's own delay is not observed"}
        events.append(Event("power", 0.0, "host", u, detail, "command", 0.0, u))
    for name, line in first_tags(lines).items():
        events += tag_events(name, line, tb)
    return events


def tag_events(name: str, line: Line, tb: Timebase) -> list[Event]:
    """A marker's time from its console tag, by every source that can say it.

    The tag's printk stamp is taken at the hook (the clock fit absorbs the print delay);
    its first byte on the wire follows the GPIO by the hook's print path, so the UART
    time is only used once that delay is calibrated on markers seen both ways."""
    detail = {"line": line.index, "text": line.text[:200]}
    out: list[Event] = []
    if line.index in tb.uart and tb.tag_delay is not None and tb.samplerate:
        q = 1 / tb.samplerate
        mid, spread = tb.tag_delay
        t = tb.uart[line.index] - mid
        out.append(Event(name, t, "uart", q + spread, detail, "analyzer", q, spread))
    if line.printk_ts is not None and tb.printk is not None:
        out.append(_printk_event(name, line, tb, detail))
    if not out:
        out.append(_host_event(name, line, tb, detail))
    return out
