"""Energy per stage from a supply's readings (power.jsonl): pure functions.

Readings are placed on the host clock where the supply took them and mapped onto the
reference clock with what the report knows (`PowerClock`); within a stage v x a is
integrated by trapezoids, held flat to the stage's ends, and the uncertainty is a bound
added up honestly rather than tightly (docs/power.md, "Energy per stage").
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rig.analysis.hostclock import HostMap
from rig.model.capture import PowerReading
from rig.model.clocks import PowerClock
from rig.model.report import Boundary, PowerSummary, Report, Stage

#: A reading below this share of the median current is "no current" (the rail is down).
OFF_SHARE = 0.05
#: ... and never above this many amperes of supply noise.
OFF_FLOOR_A = 0.005
#: The host clock map is trusted for readings with at least this many anchors.
MIN_ANCHORS = 3
#: The least serial delay still holds some latency (USB frames, the host's read path,
#: scheduling): up to this much, measured at 150 us on a loaded 2-core machine.
LATENCY_FLOOR_S = 300e-6


@dataclass(frozen=True)
class Readings:
    t_s: np.ndarray  # reference seconds, ascending
    v: np.ndarray
    a: np.ndarray
    half_s: np.ndarray  # each reading was taken within t_s +- half_s
    dropped: int = 0  # answered so late that when they were taken is unknown

    @property
    def p(self) -> np.ndarray:
        return self.v * self.a

    @property
    def place_u_s(self) -> float:
        return float(np.median(self.half_s)) if len(self.half_s) else 0.0


@dataclass(frozen=True)
class HostTimes:
    t_ns: np.ndarray  # host ns, the middle of each reading's request-to-answer window
    req_ns: np.ndarray
    ans_ns: np.ndarray
    kept: np.ndarray  # bool: answered within STALL_FACTOR of the typical round trip


#: A reading answered later than this many times the median round trip was held up
#: somewhere (the supply, the network, the host): it was taken anywhere in a long window.
STALL_FACTOR = 2.0


def host_times(records: Sequence[PowerReading]) -> HostTimes:
    """Where each reading was taken on the host clock: within [request, answer] (a
    record without them: at `t_ns`, exactly)."""
    t = np.array([r.t_ns for r in records], dtype=np.float64)
    if records and all(r.t_req_ns is not None and r.t_ans_ns is not None for r in records):
        req = np.array([r.t_req_ns for r in records], dtype=np.float64)
        ans = np.array([r.t_ans_ns for r in records], dtype=np.float64)
        rt = ans - req
        kept = rt <= STALL_FACTOR * max(float(np.median(rt)), 0.0)
        return HostTimes((req + ans) / 2, req, ans, kept)
    return HostTimes(t, t, t, np.ones(len(t), dtype=bool))


def place(records: Sequence[PowerReading], clock: PowerClock) -> Readings:
    ht = host_times(records)
    keep = np.flatnonzero(ht.kept)
    order = keep[np.argsort(ht.t_ns[keep], kind="stable")]
    return Readings(
        t_s=(ht.t_ns[order] - clock.zero_ns) / 1e9,
        v=np.array([records[i].v for i in order], dtype=np.float64),
        a=np.array([records[i].a for i in order], dtype=np.float64),
        half_s=(ht.ans_ns[order] - ht.req_ns[order]) / 2 / 1e9,
        dropped=len(records) - len(keep),
    )


def off_threshold(a: np.ndarray) -> float:
    return max(OFF_SHARE * float(np.median(np.abs(a))), OFF_FLOOR_A) if len(a) else OFF_FLOOR_A


def edge_bracket(records: Sequence[PowerReading], power_on_ns: int) -> tuple[float, float]:
    """Host ns between which the rail rose, as the readings see it: after the last
    reading without current that precedes the first with current (it was taken after
    its request), never before the power-on command, and before that first reading's
    answer. Late answers count too: their bounds hold all the same."""
    ht = host_times(records)
    order = np.argsort(ht.ans_ns, kind="stable")
    a = np.array([records[i].a for i in order], dtype=np.float64)
    on = np.flatnonzero(a > off_threshold(a))
    if not len(on):
        raise ValueError("no reading shows current: the rail never rose while sampled")
    first = int(on[0])
    hi = float(ht.ans_ns[order[first]])
    lo = float(power_on_ns)
    if first > 0:
        # Its window began after its request; one ending just after the edge averages to
        # almost nothing, so allow the last tenth of the shortest round trip.
        prev = order[first - 1]
        rt_min = float(np.min(ht.ans_ns - ht.req_ns))
        lo = max(lo, float(ht.req_ns[prev]) + 0.9 * rt_min)
    return lo, max(hi, lo)


def clock_from_edge(records: Sequence[PowerReading], power_on_ns: int) -> PowerClock:
    lo, hi = edge_bracket(records, power_on_ns)
    return PowerClock("power_edge", (hi - lo) / 2 / 1e9, (lo + hi) / 2)


def clock_from_console(host: HostMap | None) -> PowerClock | None:
    """From the report's host clock map: a console byte's delay is clock offset + one
    character time (paced) + latency >= 0, so the least delay less a character time is
    the offset, late by the least latency."""
    if host is None or host.anchors < MIN_ANCHORS:
        return None
    least = host.low_s if host.least_s is None else host.least_s
    char = host.char_s if host.pacing is None or host.pacing.paced else 0.0
    margin = max(least - host.low_s, LATENCY_FLOOR_S)  # the least latency, at most
    offset_s = least - char - margin / 2
    return PowerClock("console", margin / 2, offset_s * 1e9)


def pick_clock(
    reference: str, power_on_ns: int, records: Sequence[PowerReading], host: HostMap | None
) -> PowerClock:
    """Both intervals hold the truth, so where both exist their overlap does; if they do
    not overlap one of them is wrong, and the console's, from many lines, is kept."""
    if reference == "host":
        return PowerClock("host", 0.0, float(power_on_ns))
    console = clock_from_console(host)
    try:
        edge = clock_from_edge(records, power_on_ns)
    except ValueError:
        if console is None:
            raise
        return console
    if console is None:
        return edge
    lo = max(console.zero_ns - console.uncertainty_s * 1e9, edge.zero_ns - edge.uncertainty_s * 1e9)
    hi = min(console.zero_ns + console.uncertainty_s * 1e9, edge.zero_ns + edge.uncertainty_s * 1e9)
    if lo > hi:
        return console
    return PowerClock("console+power_edge", (hi - lo) / 2 / 1e9, (lo + hi) / 2)


@dataclass(frozen=True)
class StageEnergy:
    energy_j: float
    energy_uncertainty_j: float
    mean_current_a: float
    peak_current_a: float | None
    readings: int


def _held(t: np.ndarray, y: np.ndarray, s: float, e: float) -> float:
    """Trapezoids between t (all within [s, e]), held flat to s and to e."""
    inner = float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(t))) if len(t) > 1 else 0.0
    return inner + float(y[0]) * (t[0] - s) + float(y[-1]) * (e - t[-1])


def _line(t0: float, y0: float, t1: float, y1: float, s: float, e: float) -> float:
    """The integral over [s, e] of the straight line through (t0, y0) and (t1, y1)."""
    if t1 <= t0:
        return y0 * (e - s)
    k = (y1 - y0) / (t1 - t0)
    return (y0 + k * ((s + e) / 2 - t0)) * (e - s)


def stage_energy(
    r: Readings,
    start_s: float,
    end_s: float,
    clock_u_s: float,
    bound_u_s: tuple[float, float] = (0.0, 0.0),
) -> StageEnergy | None:
    """Energy over [start_s, end_s]; `bound_u_s`: the boundaries' own uncertainties.
    None when no reading lies inside the stage or on both sides of it."""
    t, p, a = r.t_s, r.p, r.a
    dur = end_s - start_s
    if dur <= 0:
        return None
    # A reading averages over its window (t +- half_s): one that straddles a boundary
    # mixes two stages' draw, so it counts on neither side.
    h = r.half_s
    inside = np.flatnonzero((t - h >= start_s) & (t + h <= end_s))
    earlier = np.flatnonzero(t + h <= start_s)
    later = np.flatnonzero(t - h >= end_s)
    before = int(earlier[-1]) if len(earlier) else None
    after = int(later[0]) if len(later) else None
    near = [float(p[k]) for k in (before, after) if k is not None]
    edge_p = (
        (float(p[inside[0]]), float(p[inside[-1]])) if len(inside) else (max(near or [0.0]),) * 2
    )
    shift = math.hypot(clock_u_s, r.place_u_s)
    timing = (
        shift * (_jump(r, start_s, shift) + _jump(r, end_s, shift))
        + bound_u_s[0] * edge_p[0]
        + bound_u_s[1] * edge_p[1]
    )
    if not len(inside):  # no reading inside: the line between the neighbours
        if after is None or (before is None and start_s > 0):
            return None
        # Before the power edge (t <= 0) the board drew nothing: a neighbour of 0 W.
        t0, p0, a0 = (t[before], p[before], a[before]) if before is not None else (start_s, 0, 0)
        e = _line(t0, p0, t[after], p[after], start_s, end_s)
        q = _line(t0, a0, t[after], a[after], start_s, end_s)
        u = dur * max(near) + timing
        return StageEnergy(e, u, q / dur, None, 0)
    ti, pi, ai = t[inside], p[inside], a[inside]
    energy = _held(ti, pi, start_s, end_s)
    charge = _held(ti, ai, start_s, end_s)
    # P just outside each end; with no reading there, 0: before the power edge the
    # board drew nothing, and elsewhere the change may be all of P_in.
    p_out_s = float(p[before]) if before is not None else 0.0
    p_out_e = float(p[after]) if after is not None else 0.0
    step = float(np.median(np.abs(np.diff(p)))) if len(p) > 2 else 0.0
    # How far the draw strays from a straight line between readings (wobble, noise).
    bend = float(np.median(np.abs(np.diff(p, 2)))) / 2 if len(p) > 3 else 0.0
    spread = np.maximum(np.abs(np.diff(pi)) / 2, bend)
    u_inner = math.sqrt(float(np.sum((np.diff(ti) * spread) ** 2)))
    u_s = (ti[0] - start_s) * max(abs(pi[0] - p_out_s), step)
    u_e = (end_s - ti[-1]) * max(abs(pi[-1] - p_out_e), step)
    u = math.sqrt(u_inner**2 + u_s**2 + u_e**2) + timing
    return StageEnergy(energy, u, charge / dur, float(np.max(ai)), len(inside))


def _jump(r: Readings, b: float, shift: float) -> float:
    """How much P changes across boundary `b`, seen from readings far enough from it
    that a clock error of `shift` cannot have moved them across: the range of P over
    the readings within that reach, and the nearest one beyond it on either side."""
    t, p = r.t_s, r.p
    i = int(np.searchsorted(t, b - shift, side="left"))
    j = int(np.searchsorted(t, b + shift, side="right"))
    k0, k1 = max(i - 1, 0), min(j + 1, len(t))
    near = list(p[k0:k1])
    if i == 0 and b - shift <= 0 <= b + shift:
        near.append(0.0)  # around the power edge: nothing drawn before it
    return max(near) - min(near) if near else 0.0


def _bound_u(stage: Stage) -> tuple[float, float]:
    def u(b: Boundary | None) -> float:
        return float(b.uncertainty_s or 0.0) if b is not None else 0.0

    return u(stage.start), u(stage.end)


def add_energy(
    report: Report,
    power_on_ns: int,
    records: Sequence[PowerReading],
    host: HostMap | None = None,
) -> None:
    """Give each stage of `report` with both ends its energy, mean and peak current and
    reading count, and the report a `power` section. `host`: the timebase's host clock
    map, when the caller has it (build_report does)."""
    if not records:
        return
    reference = report.time_base.reference if report.time_base else "host"
    notes: list[str] = []
    try:
        clock = pick_clock(reference, power_on_ns, records, host)
    except ValueError as e:
        report.power = PowerSummary(readings=len(records), error=str(e))
        return
    r = place(records, clock)
    total = total_u = 0.0
    for st in report.stages:
        if st.start_s is None or st.end_s is None:
            continue
        se = stage_energy(r, st.start_s, st.end_s, clock.uncertainty_s, _bound_u(st))
        if se is None:
            notes.append(f"stage {st.name}: no reading around it, no energy")
            continue
        st.energy_j = se.energy_j
        st.energy_uncertainty_j = se.energy_uncertainty_j
        st.mean_current_a = se.mean_current_a
        st.peak_current_a = se.peak_current_a
        st.energy_readings = se.readings
        total += se.energy_j
        total_u += se.energy_uncertainty_j
    section = PowerSummary(
        readings=len(records),
        rate_hz=_rate(r.t_s),
        clock=clock,
        reading_time_u_s=r.place_u_s,
        late_readings_dropped=r.dropped,
        stages_energy_j=total,
        stages_energy_uncertainty_j=total_u,
        notes=notes,
        trace=trace(r),
    )
    if reference != "host":
        # What the readings say of the power edge, on the reference clock: it should
        # hold 0 (a check of the clock map, not used by it unless nothing else exists).
        with contextlib.suppress(ValueError):  # no reading with current: no check
            lo, hi = edge_bracket(records, power_on_ns)
            section.edge_seen_s = [(lo - clock.zero_ns) / 1e9, (hi - clock.zero_ns) / 1e9]
    report.power = section


#: The report's current trace (for the HTML timeline) keeps at most this many points.
TRACE_POINTS = 2000


def trace(r: Readings) -> dict[str, list[float]]:
    """The readings on the reference clock; beyond TRACE_POINTS each bucket of readings
    keeps its peak current (an inrush must not vanish in an average)."""
    n = len(r.t_s)
    if n <= TRACE_POINTS:
        idx = np.arange(n)
    else:
        edges = np.linspace(0, n, TRACE_POINTS + 1).astype(np.int64)
        idx = np.array([a + int(np.argmax(r.a[a:b])) for a, b in itertools.pairwise(edges)])
    return {
        "t_s": [round(float(x), 9) for x in r.t_s[idx]],
        "a": [float(x) for x in r.a[idx]],
        "v": [float(x) for x in r.v[idx]],
    }


def _rate(t: np.ndarray) -> float | None:
    span = float(t[-1] - t[0]) if len(t) > 1 else 0.0
    return (len(t) - 1) / span if span > 0 else None
