"""Every time the boot tells us about, on the reference clock, with source and uncertainty.

Sources, best first: `gpio` (analyzer edge), `uart` (the tapped uart_tx channel),
`printk` (stamp through the clock fit), `host` (serial arrival through the host clock
map). Each event names the clock it was read on and splits its uncertainty into what
that clock shares between events and what is its own, so a stage between two events on
one clock is not charged twice for the shared offset.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rig import names
from rig.analysis.clockfit import PRINTK_RESOLUTION_S, Anchor, LinearFit, fit
from rig.analysis.consoleclock import console_clocks
from rig.analysis.hostclock import HostMap, fit_lines, host_only, with_bounds
from rig.analysis.lines import Line, stand_in_reads
from rig.analysis.pacing import FIRST_SLACK_S, assess_pacing, band_slack, char_time_s
from rig.analysis.readlate import read_late
from rig.analysis.uartlines import match_lines
from rig.model import Chunk, MarkerScan
from rig.model.clocks import Pacing, ReadBound
from rig.model.report import Event
from rig.model.run import RunConsoleReader
from rig.model.uart import UartBytes

#: Console-only runs: t = 0 is the stamp taken right before the power-on command, and the
#: time from the command to the rail rising (USB, relay coil, contacts) is not observed.
#: Mechanical relays in USB modules switch within about 15 ms of the command's end.
RELAY_DELAY_BOUND_S = 15e-3


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


def _settled(
    fit_with: Callable[[Pacing], HostMap],
    reads: Sequence[Chunk],
    baud: int,
    uart: UartBytes | None,
    late: ReadBound,
) -> HostMap:
    """The host map and the one pacing verdict it was fitted with. The first verdict
    grants the widest lead any adapter explains; the band then fitted may explain less,
    which can only turn a console unpaced: refit once with that verdict. A read the
    reader says was late explains that much more lead."""
    pacing = assess_pacing(reads, baud, FIRST_SLACK_S + late.late_max_s, uart)
    host = fit_with(pacing)
    slack = band_slack(host.high_s, host.low_s) + late.late_max_s
    refined = assess_pacing(reads, baud, slack, uart)
    if refined.verdict != pacing.verdict:
        host = fit_with(refined)
    return dataclasses.replace(host, pacing=refined)


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
    chunks: Sequence[Chunk] | None = None,
    reader: RunConsoleReader | None = None,
) -> Timebase:
    """`chunks`: the reads the lines came from (each line stands in as one read when
    absent); they and the tap (`uart`) give the pacing verdict. `reader`: the console
    reader's self-check (run.json), how late its stamps can be."""
    char_s = char_time_s(baud)
    late = read_late(reader, lines)
    tags = first_tags(lines)
    reads = list(chunks) if chunks is not None else stand_in_reads(lines)
    if scan is None:  # the host clock is the reference (t = 0 at the power-on command)
        clocks: dict[str, Any] = {}

        def console_only(pacing: Pacing) -> HostMap:
            clocks["host"], clocks["printk"] = console_clocks(
                lines, power_on_ns, char_s, pacing, late
            )
            return clocks["host"]

        host = _settled(console_only, reads, baud, None, late)
        return Timebase("host", None, None, clocks["printk"], host, {})
    if not scan.power_up:
        no_edge = dataclasses.replace(host_only(power_on_ns, char_s), reads=late)
        return Timebase("analyzer", None, None, None, no_edge, {})
    power = scan.power_up[0]
    gpio = gpio_times(scan, power)
    anchors = [
        Anchor(name, tags[name].printk_ts or 0.0, t, LATE_STAMP_S.get(name, 0.0))
        for name, t in gpio.items()
        if name in tags and tags[name].printk_ts is not None
    ]
    printk = fit(sorted(anchors, key=lambda a: a.y))
    tapped = (
        match_lines(lines, uart.data, uart.start, power, scan.samplerate)
        if uart is not None
        else {}
    )
    exact: dict[int, float] = {}
    produced: dict[int, float] = {}
    bias = 0.0  # how far the productions may be off together
    if tapped:
        exact = tapped  # every tapped line is an exact anchor for the host clock
    elif printk:
        produced = {ln.index: printk(ln.printk_ts) for ln in lines if ln.printk_ts is not None}
        bias = printk.bias_u
        # A bootloader's tag has no stamp but its GPIO edge, which it follows by a short
        # print path: the one latency sample from before the kernel, whose console may
        # arrive with another delay (an emulator's pty under load).
        for n, t in gpio.items():
            if n in tags and tags[n].printk_ts is None and n not in LATE_STAMP_S:
                produced.setdefault(tags[n].index, t)
    if not produced and not tapped:
        # A tag leaves after its GPIO edge by the hook's print path: a latency sample
        # biased late, used only when nothing better exists.
        produced = {tags[n].index: t for n, t in gpio.items() if n in tags}

    def analyzer(pacing: Pacing) -> HostMap:
        return fit_lines(lines, produced, exact, pacing, char_s, bias, late) or with_bounds(
            dataclasses.replace(host_only(power_on_ns, char_s), reads=late), lines, {}, pacing
        )

    host = _settled(analyzer, reads, baud, uart, late)
    delay = _tag_delay(gpio, tags, tapped)
    return Timebase("analyzer", power, scan.samplerate, printk, host, gpio, tapped, delay)


def line_event(name: str, line: Line, tb: Timebase) -> Event:
    """The best time for a console line's first byte: the UART tap, its printk stamp if
    fitted, else its arrival."""
    detail = {"line": line.index, "text": line.text[:200]}
    if line.index in tb.uart and tb.samplerate:
        u = 1 / tb.samplerate
        return Event(name, tb.uart[line.index], "uart", u, detail, "analyzer", u, 0.0)
    if _stamped(line, tb):
        return _printk_event(name, line, tb, detail)
    return _host_event(name, line, tb, detail)


def _stamped(line: Line, tb: Timebase) -> bool:
    """A printk stamp the fit can map (not one garbled on the wire)."""
    return (
        line.printk_ts is not None and tb.printk is not None and line.index not in tb.host.garbled
    )


def _host_event(name: str, line: Line, tb: Timebase, detail: dict[str, Any]) -> Event:
    # Each line's latency is its own: nothing cancels between two host-timed events.
    t, u = tb.host.place(line)
    return Event(name, t, "host", u, detail, clock="host", own_s=u)


def _printk_event(name: str, line: Line, tb: Timebase, detail: dict[str, Any]) -> Event:
    pk, x = tb.printk, line.printk_ts
    assert x is not None and pk is not None
    own = 3 * pk.scatter if tb.reference == "analyzer" else 0.0
    u, rate = pk.uncertainty(x), pk.rate_uncertainty
    return Event(name, pk(x), "printk", u, detail, "printk", PRINTK_RESOLUTION_S, own, rate)


def command_power(command_s: float | None) -> Event:
    """The power event of a console-only run. Its stamp precedes the switch, so the rail
    rose after t = 0: while the power-on command ran (`command_s`, when it returned, from
    run.json `timing.steps`) or within a relay's delay after it, the uncertainty of
    everything timed from power-on."""
    end = max(0.0, command_s) if command_s is not None else 0.0
    u = end + RELAY_DELAY_BOUND_S
    if command_s is None:
        why = "the power-on command's duration is not recorded (no run.json timing.steps)"
    else:
        why = f"the power-on command returned {end * 1e3:.1f} ms after it"
    detail = {
        "t0": f"stamp right before the power-on command; {why}, and a relay switches "
        f"within {RELAY_DELAY_BOUND_S * 1e3:g} ms of the command: the rail rose in rail_within_s",
        "power_on_command_s": command_s,
        "rail_within_s": [0.0, u],
    }
    return Event("power", 0.0, "host", u, detail, "command", 0.0, u)


def marker_events(lines: list[Line], tb: Timebase, command_s: float | None = None) -> list[Event]:
    """Every marker from every source we have (GPIO edge and its console tag).
    `command_s`: when the power-on command returned, from its stamp (console-only runs)."""
    events: list[Event] = []
    if tb.power_sample is not None and tb.samplerate:
        u = 1 / tb.samplerate
        events.append(
            Event("power", 0.0, "gpio", u, {"sample": tb.power_sample}, "analyzer", u, 0.0)
        )
        for name, t in sorted(tb.gpio.items(), key=lambda kv: kv[1]):
            events.append(Event(name, t, "gpio", u, {}, "analyzer", u, 0.0))
    elif tb.reference == "host":
        events.append(command_power(command_s))
    for name, line in first_tags(lines).items():
        events += tag_events(name, line, tb)
    return events


def tag_events(name: str, line: Line, tb: Timebase) -> list[Event]:
    """A marker's time from its console tag, by every source that can say it. The printk
    stamp is taken at the hook; the first byte follows the GPIO by the hook's print path,
    so the UART time needs that delay calibrated on markers seen both ways."""
    detail = {"line": line.index, "text": line.text[:200]}
    out: list[Event] = []
    if line.index in tb.uart and tb.tag_delay is not None and tb.samplerate:
        q = 1 / tb.samplerate
        mid, spread = tb.tag_delay
        t = tb.uart[line.index] - mid
        out.append(Event(name, t, "uart", q + spread, detail, "analyzer", q, spread))
    if _stamped(line, tb):
        ev = _printk_event(name, line, tb, detail)
        # A fit on GPIO edges absorbs the hook's print path; an arrival envelope does not.
        out.append(_before_hook(ev) if tb.reference == "host" else ev)
    if not out:
        out.append(_before_hook(_host_event(name, line, tb, detail)))
    return out


#: A tag follows its GPIO write by the hook's print path, which a run without that edge
#: does not see. Kernel and U-Boot hooks print right after the write (20-220 us under
#: QEMU's TCG, bench/tag_delay.py; the default leaves room for slower boards); the
#: userspace hook's path took up to 19 ms on a busy host: the bound is the largest path
#: measured plus one standard deviation, rounded up (docs/analysis.md, "The userspace
#: tag's print path").
HOOK_BOUND_S = {"ui_ready": 25e-3}
#: Tags stamped after their edge by a path that varies from boot to boot (userspace:
#: the GPIO ioctl, then a write to /dev/kmsg), not a fixed print delay a fit absorbs.
LATE_STAMP_S = {"ui_ready": HOOK_BOUND_S["ui_ready"]}
DEFAULT_HOOK_BOUND_S = 5e-3
#: Hooks of one kind take the same path: between two of them on one clock only this much
#: (and what a slower hook adds over DEFAULT_HOOK_BOUND_S) does not cancel.
HOOK_JITTER_S = 0.25e-3


def _before_hook(ev: Event) -> Event:
    """The GPIO edge behind a tag: up to the hook bound before the tag, not before t = 0."""
    bound = HOOK_BOUND_S.get(ev.name, DEFAULT_HOOK_BOUND_S)
    lo = max(0.0, ev.t_s - ev.uncertainty_s - bound)
    hi = ev.t_s + ev.uncertainty_s
    u = (hi - lo) / 2
    own = min(u, ev.own_s + (bound - DEFAULT_HOOK_BOUND_S) / 2 + HOOK_JITTER_S)
    extra = {**ev.extra, "hook_bound_s": bound}
    return dataclasses.replace(ev, t_s=(lo + hi) / 2, uncertainty_s=u, extra=extra, own_s=own)
