"""Mapping serial arrival times (host clock) onto the reference clock.

A line's first byte left no earlier than it was produced and than the bytes before it
drained (on a paced console), and arrived after a delay: clock offset + one character
time (paced) + USB-serial latency within the adapter's band. The band is learned only
from lines whose emission follows from their production; a line known only by its
arrival is bounded by a forward and a backward pass (docs/analysis.md, "The host clock").
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from rig.analysis.lines import Line, kernel_backlog
from rig.analysis.pacing import MAX_LATENCY_S
from rig.analysis.readlate import assumed
from rig.model.clocks import HostFit, Pacing, ReadBound

#: Without anchors (console-only runs) the adapter's latency is unknown; FTDI's default
#: latency timer is 16 ms, so assume a band that wide.
DEFAULT_BAND_S = 16e-3
#: Probability that a line's latency falls outside the band under a uniform latency:
#: well below the 1 % the band must hold, since real adapters' latencies are not uniform.
MISS = 0.002
#: The smallest buffer a common USB-serial adapter sends when full (CH340: 32 bytes,
#: FTDI: 62, CP210x: 64 and more).
MIN_BUFFER_BYTES = 32
#: A gap in the sorted delays that sets the ones above it apart (keep_latencies): this
#: many times the spread below it and at least GAP_MIN_S, with GAP_MIN_BELOW delays
#: below it and at most GAP_MAX_ABOVE of them above.
GAP_FACTOR = 4.0
GAP_MIN_S = 2e-3
GAP_MIN_BELOW = 5
GAP_MAX_ABOVE = 0.25
# A delay more than MAX_LATENCY_S (pacing.py) above the least was held or read late.


@dataclass(frozen=True, eq=False)
class HostMap:
    low_s: float  # smallest arrival - emission delay (host seconds)
    high_s: float  # largest
    anchors: int
    char_s: float  # one character time at the console baud rate
    latencies_s: tuple[float, ...] = ()  # each kept anchor's delay above the least one
    rejected: int = 0  # anchors too late to be USB latency (held, or read late)
    pacing: Pacing | None = None
    #: line index -> earliest and latest emission of its first byte (reference seconds)
    bounds: Mapping[int, tuple[float, float]] = field(default_factory=dict)
    queued: int = 0  # produced lines that waited for earlier bytes to drain
    queue_max_s: float = 0.0
    held: int = 0  # produced lines behind output held for a reason the bytes do not show
    late: int = 0  # lines that arrived later than the band allows (read late)
    least_s: float | None = None  # the least delay seen (low_s before widening)
    garbled: frozenset[int] = frozenset()  # lines whose printk stamp is out of order
    #: how late the host read: added to every uncertainty, not to the band
    reads: ReadBound = field(default_factory=assumed)

    @property
    def uncertainty_s(self) -> float:
        return (self.high_s - self.low_s) / 2 + self.char_s + self.reads.bound_s

    def to_ref(self, t_ns: int) -> float:
        """A bare arrival, with nothing known about the bytes around it."""
        return t_ns / 1e9 - (self.low_s + self.high_s) / 2

    def place(self, line: Line) -> tuple[float, float]:
        """Reference time of a line's first byte and its uncertainty."""
        b = self.bounds.get(line.index)
        late = self.reads.lines.get(line.index, 0.0)
        if b is None:
            return self.to_ref(line.t_ns), self.uncertainty_s + late
        lo, hi = b
        return (lo + hi) / 2, (hi - lo) / 2 + self.reads.bound_s + late

    def to_model(self) -> HostFit:
        return HostFit(
            model="ref = arrival_s - delay, delay in [low_s, high_s] (latency >= 0); "
            "queued lines wait for the bytes before them to drain",
            low_s=self.low_s,
            high_s=self.high_s,
            spread_s=self.high_s - self.low_s,
            anchors=self.anchors,
            rejected=self.rejected,
            latencies_s=list(self.latencies_s),
            uncertainty_s=self.uncertainty_s,
            pacing=self.pacing,
            queued_lines=self.queued,
            queue_max_s=self.queue_max_s,
            held_lines=self.held,
            late_lines=self.late,
            garbled_stamps=sorted(self.garbled),
            reads=self.reads,
        )


def beta_margin(spread: float, n: int) -> float:
    """For n uniform samples the gap below the minimum is Beta(1, n) distributed: the
    margin beyond each extreme that a new sample exceeds with probability MISS / 2."""
    width = spread * (n + 1) / (n - 1)
    return (1 - (MISS / 2 * (n + 1)) ** (1 / (n + 1))) * width


#: A garbled stamp or a clock glitch can put one line anywhere below the rest: the least
#: delay needs this many within MAX_LATENCY_S above it (when that many exist).
FLOOR_SUPPORT = 3


def supported_floor(values: Sequence[float]) -> float:
    """The least value with FLOOR_SUPPORT values (itself included) within MAX_LATENCY_S
    above it; the least value when there are not that many."""
    vs = sorted(values)
    if len(vs) < FLOOR_SUPPORT:
        return vs[0]
    for i, v in enumerate(vs):
        if bisect.bisect_right(vs, v + MAX_LATENCY_S) - i >= FLOOR_SUPPORT:
            return v
    return vs[0]


def keep_latencies(delays: Mapping[int, float]) -> dict[int, float]:
    """The delays (key: line) that USB latency can explain: none beyond MAX_LATENCY_S.
    Below it latency has no fixed shape (a full buffer flushes at once, a lone line
    waits for the timer), so delays are set apart only across a gap far wider than
    everything under it: a kernel backlog's last lines, or a host that read late."""
    if not delays:
        return {}
    low = supported_floor(list(delays.values()))
    kept = sorted((d, k) for k, d in delays.items() if 0 <= d - low <= MAX_LATENCY_S)
    for n in range(GAP_MIN_BELOW, len(kept)):
        gap = kept[n][0] - kept[n - 1][0]
        wide = gap > max(GAP_FACTOR * (kept[n - 1][0] - low), GAP_MIN_S)
        if wide and len(kept) - n <= GAP_MAX_ABOVE * len(kept):
            kept = kept[:n]
            break
    return {k: d for d, k in kept}


def fit_host(pairs: Sequence[tuple[int, float]], char_s: float) -> HostMap | None:
    """`pairs`: (arrival host ns, reference time the line's first byte was emitted)."""
    if not pairs:
        return None
    delays = [t_ns / 1e9 - ref for t_ns, ref in pairs]
    kept = sorted(keep_latencies(dict(enumerate(delays))).values())
    low, high, n = kept[0], kept[-1], len(kept)
    seen = tuple(d - low for d in kept)
    if n < 3:
        return HostMap(low, low + DEFAULT_BAND_S, n, char_s, seen, len(delays) - n, least_s=low)
    m = beta_margin(high - low, n)
    return HostMap(low - m, high + m, n, char_s, seen, len(delays) - n, least_s=low)


def host_only(power_on_ns: int, char_s: float) -> HostMap:
    """Console-only runs: t = 0 at the power-on command, latency band assumed."""
    base = power_on_ns / 1e9
    return HostMap(base, base + DEFAULT_BAND_S, 0, char_s)


def garbled_stamps(lines: Sequence[Line]) -> frozenset[int]:
    """Stamped lines out of the kernel's log order: printk stamps never decrease from one
    line to the next, so the ones off the longest non-decreasing run were garbled on
    the wire (line noise turning a digit) and are not times."""
    stamped = [(ln.index, ln.printk_ts) for ln in lines if ln.printk_ts is not None]
    tails: list[float] = []  # least last stamp of a run of each length
    ends: list[int] = []  # position in `stamped` of that run's last line
    prev = [-1] * len(stamped)
    for pos, (_, ts) in enumerate(stamped):
        k = bisect.bisect_right(tails, ts)
        prev[pos] = ends[k - 1] if k else -1
        if k == len(tails):
            tails.append(ts)
            ends.append(pos)
        else:
            tails[k], ends[k] = ts, pos
    keep = set()
    pos = ends[-1] if ends else -1
    while pos >= 0:
        keep.add(stamped[pos][0])
        pos = prev[pos]
    return frozenset(i for i, _ in stamped if i not in keep)


def line_bytes(lines: Sequence[Line]) -> list[int]:
    """Bytes on the wire from each line's first byte to the next line's."""
    out = [b.offset - a.offset for a, b in itertools.pairwise(lines)]
    if lines:
        out.append(len(lines[-1].raw) + 2)
    return out


@dataclass(frozen=True)
class Drain:
    """The forward pass: how early each line's first byte can have left the target."""

    lo: tuple[float, ...]  # earliest emission of every line
    emitted: dict[int, float]  # produced lines: max(production, drain of earlier bytes)
    samples: frozenset[int]  # produced lines whose emission follows from productions only
    queue: dict[int, float]  # produced lines: time spent waiting behind earlier bytes
    late: int = 0  # lines whose arrival is beyond the band (read late): not bounded by it


def drain(
    lines: Sequence[Line],
    produced: Mapping[int, float],
    wire_s: float,
    high_s: float | None,
    latest_s: Sequence[float] | None = None,
) -> Drain:
    """`produced`: line index -> when the target produced it (reference seconds);
    `wire_s`: the time a byte takes to drain (0 when unpaced); `high_s`: the band's
    upper delay (a line left no earlier than arrival - high_s), None in a first pass
    before any band is known; `latest_s`: the backward pass, which tells a line read
    late (its arrival bound would pass its latest emission) from one held."""
    nbytes = line_bytes(lines)
    lo: list[float] = []
    emitted: dict[int, float] = {}
    queue: dict[int, float] = {}
    samples: set[int] = set()
    late = 0
    ready, known = 0.0, True  # when earlier bytes are out; from productions only?
    for i, ln in enumerate(lines):
        p = produced.get(i)
        if p is not None and latest_s is not None and p > latest_s[i]:
            p = None  # produced after it arrived: a garbled stamp, not a time
        e = ready if p is None else max(p, ready)
        if p is not None:
            emitted[i] = e
            queue[i] = max(0.0, ready - p)
            known = known or p >= ready
            if known:
                samples.add(i)
        if high_s is not None and ln.t_ns / 1e9 - high_s > e:
            if latest_s is not None and ln.t_ns / 1e9 - high_s > latest_s[i]:
                late += 1
            else:  # held: its arrival says it left later than anything before implies
                e, known = ln.t_ns / 1e9 - high_s, False
        if latest_s is not None:
            e = min(e, latest_s[i])
        lo.append(e)
        ready = e + nbytes[i] * wire_s
    return Drain(tuple(lo), emitted, frozenset(samples), queue, late)


def latest(lines: Sequence[Line], low_s: float, wire_s: float) -> list[float]:
    """The backward pass: the latest each line's first byte can have left, given its
    arrival and that its bytes were out before the next line's first byte."""
    nbytes = line_bytes(lines)
    out = [0.0] * len(lines)
    nxt = float("inf")
    for i in range(len(lines) - 1, -1, -1):
        nxt = out[i] = min(lines[i].t_ns / 1e9 - low_s, nxt - nbytes[i] * wire_s)
    return out


def wire_time(pacing: Pacing, char_s: float) -> float:
    """Per-byte drain time: a character time on a paced console, nothing otherwise."""
    return char_s if pacing.paced else 0.0


def timer_high(host: HostMap, pacing: Pacing) -> float:
    """The band's top, raised to a latency timer the lines may not have shown: an adapter
    sends its buffer when full or when its timer expires, and long stamped lines mostly
    go with a full buffer while a short lone line waits for the timer. Latencies that
    flush sooner than MIN_BUFFER_BYTES fill show a timer at least that short; otherwise
    the FTDI default is assumed, from the least delay seen (latency >= 0)."""
    # Twice the median: the flush period under uniform latency, which a few late reads
    # of a loaded host do not move.
    lat = sorted(host.latencies_s)
    seen = 2 * lat[len(lat) // 2] if len(lat) >= 3 else DEFAULT_BAND_S
    if pacing.verdict == "unpaced" or seen < MIN_BUFFER_BYTES * host.char_s:
        return host.high_s
    least = host.low_s if host.least_s is None else host.least_s
    return max(host.high_s, least + DEFAULT_BAND_S)


def with_bounds(
    host: HostMap,
    lines: Sequence[Line],
    produced: Mapping[int, float],
    pacing: Pacing,
) -> HostMap:
    """`host` with every line's emission interval (none before t = 0) and the queue it saw."""
    wire = wire_time(pacing, host.char_s)
    hi = [max(h, 0.0) for h in latest(lines, host.low_s, wire)]
    fwd = drain(lines, produced, wire, host.high_s, hi)
    bounds = {i: (max(a, 0.0), b) for i, (a, b) in enumerate(zip(fwd.lo, hi, strict=True))}
    queued = [q for i, q in fwd.queue.items() if q > 0 and i in fwd.samples]
    return dataclasses.replace(
        host,
        pacing=pacing,
        bounds=bounds,
        queued=len(queued),
        queue_max_s=max(queued, default=0.0),
        held=len(fwd.emitted) - len(fwd.samples),
        late=fwd.late,
    )


#: Fewer anchors read on time than this: the ones read late too (three set a band).
MIN_ON_TIME = 3


def _pairs(
    lines: Sequence[Line], fwd: Drain, exact: Mapping[int, float], late: Collection[int]
) -> list[tuple[int, float]]:
    """(arrival, emission) of the band's anchors, less the lines read `late`."""
    out = [(lines[i].t_ns, fwd.emitted[i]) for i in sorted(fwd.samples) if i not in late]
    out += [(lines[i].t_ns, t) for i, t in exact.items() if i not in fwd.samples and i not in late]
    return out


def fit_lines(
    lines: Sequence[Line],
    produced: Mapping[int, float],
    exact: Mapping[int, float],
    pacing: Pacing,
    char_s: float,
    produced_u: float,
    reads: ReadBound,
) -> HostMap | None:
    """The band from lines with a known production (printk through its fit, or a tag at
    its GPIO edge) or emission (`exact`: the UART tap), then every line's bounds.
    `produced_u`: how far all productions may be off together (a printk fit's offset
    known only within a bound): the band widens by it on both sides. `reads`: what the
    reader says of its stamps; the lines it read late are no latency samples."""
    wire = wire_time(pacing, char_s)
    garbled = garbled_stamps(lines)
    # Produced when stamped, but held until the console registered: no latency samples.
    backlog = kernel_backlog(lines) - exact.keys()
    both = {**{i: p for i, p in produced.items() if i not in garbled}, **exact}
    host: HostMap | None = None
    for _ in range(2):  # the second pass restarts the drain after held lines
        hi = latest(lines, host.low_s, wire) if host else None
        fwd = drain(lines, both, wire, host.high_s if host else None, latest_s=hi)
        pairs = _pairs(lines, fwd, exact, reads.lines.keys() | backlog)
        if len(pairs) < MIN_ON_TIME:  # better a band late reads widened than none
            pairs = _pairs(lines, fwd, exact, backlog)
        host = fit_host(pairs, char_s) or host
        if host is None:
            return None
    assert host is not None
    host = dataclasses.replace(host, high_s=timer_high(host, pacing), garbled=garbled, reads=reads)
    if produced_u > 0:
        host = dataclasses.replace(
            host, low_s=host.low_s - produced_u, high_s=host.high_s + produced_u
        )
    return with_bounds(host, lines, both, pacing)
