"""Was the boot a true cold boot? The rail's off-time, rise time and back-powering, from
run.json, the capture's scan and a supply's readings (docs/cold-boot.md).

Readings and the power commands' stamps are both host CLOCK_MONOTONIC ns, so no clock
map adds its uncertainty. A supply averages over its measurement: a reading below a
level means the rail was below it at some instant of the reading's window, so every
crossing is bracketed, never guessed.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from rig.model import MarkerScan, Run
from rig.model.capture import PowerReading
from rig.model.report import ColdBoot

#: A swing smaller than this (V) is no rise to time.
_MIN_SWING_V = 0.5


@dataclass(frozen=True)
class Reading:
    """One voltage reading and the host-ns window it was taken in."""

    lo: int
    hi: int
    v: float


def readings(records: Sequence[PowerReading]) -> list[Reading]:
    """The voltage readings of power.jsonl or power_hold.jsonl records, in time order:
    each taken between its current query's answer and the next record's request."""
    recs = sorted(records, key=lambda r: r.t_ns)
    out: list[Reading] = []
    for i, r in enumerate(recs):
        ans, req = r.t_ans_ns, r.t_req_ns
        if ans is None or req is None:  # `t_ns` is all there is
            out.append(Reading(r.t_ns, r.t_ns, float(r.v)))
            continue
        nxt = recs[i + 1].t_req_ns if i + 1 < len(recs) else None
        hi = nxt if nxt is not None and nxt >= ans else ans + 2 * max(ans - req, 0)
        out.append(Reading(ans, hi, float(r.v)))
    return out


@dataclass(frozen=True)
class _Span:
    """An off-time: [low, high] in seconds, from `source`; `bound` when one end is open."""

    low: float
    high: float
    source: str
    bound: str | None = None

    @property
    def value(self) -> float:
        return {"upper": self.high, "lower": self.low}.get(
            self.bound or "", 0.5 * (self.low + self.high)
        )

    @property
    def uncertainty(self) -> float | None:
        return None if self.bound else 0.5 * (self.high - self.low)


def _hold_off_ns(run: Run) -> int | None:
    """The power-off command the hold readings began with (the visa driver's stamp),
    else this cycle's."""
    pr = (run.instruments or {}).get("power_readings")
    off = pr.get("hold_off_ns") if isinstance(pr, dict) else None
    return off if isinstance(off, int) else power_off_ns(run)


def power_off_ns(run: Run) -> int | None:
    """Host ns of the power-off command the board has been off since: the previous
    cycle's (`rail_off_since_ns`, when the rig switched it off then), else this cycle's
    `power_off_ns`, or for an older run the start of its first `power off` step (a
    little earlier: still an upper bound of the off-time)."""
    if run.is_bare:
        return None
    if run.rail_off_since_ns is not None:
        return run.rail_off_since_ns
    if run.power_off_ns is not None:
        return run.power_off_ns
    for st in (run.timing.steps or []) if run.timing else []:
        if st.title == "power off" and st.start_s < 0:
            return run.power_on_ns + round(st.start_s * 1e9)
    return None


def _from_supply(
    hold: list[Reading], boot: list[Reading], off_ns: int | None, on_ns: int, thr: float
) -> _Span | None:
    """The rail below `thr` from its fall in the hold to its rise in the boot readings."""
    if not hold:
        return None
    above = [i for i, r in enumerate(hold) if r.v >= thr]
    if above and above[-1] == len(hold) - 1:
        return _Span(0.0, 0.0, "supply")  # never below at the end of the hold: not off
    if above:
        j = above[-1]
        f_lo, f_hi = hold[j].lo, hold[j + 1].hi
    else:  # below from the first reading: the fall came after the off command
        f_lo = off_ns if off_ns is not None and off_ns <= hold[0].hi else hold[0].lo
        f_hi = hold[0].hi
    last_low = hold[-1]
    rise_hi = None
    for r in boot:
        if r.v >= thr:
            rise_hi = r.hi
            break
        last_low = r
    if rise_hi is None:
        return None  # the rail never came up in the readings: nothing to time
    r_lo = max(last_low.lo, on_ns)
    return _Span(max(0.0, (r_lo - f_hi) / 1e9), (rise_hi - f_lo) / 1e9, "supply")


def rise_time(hold: list[Reading], boot: list[Reading], on_ns: int) -> float | None:
    """An upper bound of the 10-90 % rise from the supply's readings (from the last hold
    reading to the boot readings' median); None when the readings cannot bound it."""
    if len(boot) < 3:
        return None
    low = hold[-1].v if hold else 0.0
    swing = statistics.median(r.v for r in boot) - low
    if swing < _MIN_SWING_V:
        return None
    v10, v90 = low + 0.1 * swing, low + 0.9 * swing
    seq = ([hold[-1]] if hold else []) + boot
    b = next((i for i, r in enumerate(seq) if r.v >= v90), None)
    if b is None:
        return None
    below = [i for i in range(b) if seq[i].v <= v10]
    start = max(seq[below[-1]].lo, on_ns) if below else on_ns
    return max(0.0, (seq[b].hi - start) / 1e9)


def _from_capture(scan: MarkerScan | None, edge: int | None) -> _Span | None:
    """The power channel low before the edge the time base uses: since its debounced
    fall (both ends seen), or since the capture began (a lower bound)."""
    if scan is None or not scan.power_channel or edge is None or scan.samplerate <= 0:
        return None
    period = 1.0 / scan.samplerate
    downs = [d for d in scan.power_down if d < edge]
    if downs:
        t = (edge - downs[-1]) * period
        return _Span(max(0.0, t - 2 * period), t + 2 * period, "capture")
    return _Span(edge * period, edge * period, "capture", "lower")


def assess(
    run: Run,
    scan: MarkerScan | None,
    edge_sample: int | None,
    power: Sequence[PowerReading] | None,
    hold: Sequence[PowerReading] | None,
    min_off_s: float,
    rail_off_v: float,
) -> ColdBoot | None:
    """The report's `cold_boot` section; None when nothing in the artifacts speaks to it."""
    boot_r, hold_r = readings(power or []), readings(hold or [])
    on_ns = run.power_on_ns
    off_ns = power_off_ns(run)
    supply = _from_supply(hold_r, boot_r, _hold_off_ns(run), on_ns, rail_off_v)
    capture = _from_capture(scan, edge_sample)
    relay = None
    if off_ns is not None and on_ns >= off_ns:
        relay = _Span(0.0, (on_ns - off_ns) / 1e9, "relay", "upper")
    span = supply or (capture if capture and capture.bound is None else None) or relay or capture
    if span is None and not hold_r:
        return None
    rail_min = min((r.v for r in hold_r), default=None)
    back = None if rail_min is None else rail_min > rail_off_v
    rise = rise_time(hold_r, boot_r, on_ns)

    reasons: list[str] = []
    if back:
        reasons.append(
            f"back_powered: the rail stayed at {rail_min:.2f} V or more through the off-hold "
            f"(rail_off_v {rail_off_v:g} V): something else (the console adapter's TX line?) "
            "fed the board"
        )
    short = _short(span, min_off_s)
    if short and span is not None and not (back and span.source == "supply"):
        how = {"upper": "at most ", "lower": "at least "}.get(span.bound or "", "")
        reasons.append(
            f"short_off: the rail was off {how}{span.value:.3f} s ({span.source}), "
            f"less than min_off_s {min_off_s:g} s"
        )
    if back or short:
        cold: bool | None = False
    elif back is False and _enough(span, capture, min_off_s):
        cold = True
    else:
        cold = None
        if back is None:
            reasons.append(
                "unknown: no supply readings across the off-hold, so back-powering is not "
                "measured (docs/cold-boot.md)"
            )
        if not _enough(span, capture, min_off_s):
            reasons.append(f"unknown: the off-time is not shown to reach min_off_s {min_off_s:g} s")
    return ColdBoot(
        off_time_s=_r(span.value) if span else None,
        off_time_uncertainty_s=_r(span.uncertainty) if span else None,
        off_time_source=span.source if span else None,
        off_time_bound=span.bound if span else None,
        rise_time_s=_r(rise),
        rise_time_source="supply (upper bound)" if rise is not None else None,
        rail_min_v=_r(rail_min),
        back_powered=back,
        true_cold_boot=cold,
        reasons=reasons,
        min_off_s=min_off_s,
        rail_off_v=rail_off_v,
    )


def _short(span: _Span | None, min_off_s: float) -> bool:
    """The off-time is below the minimum: an estimate below it, or an upper bound."""
    return span is not None and span.bound != "lower" and span.value < min_off_s


def _enough(span: _Span | None, capture: _Span | None, min_off_s: float) -> bool:
    """Shown to reach the minimum: an estimate at it, or a lower bound (the capture's)."""
    if span is not None and span.bound != "upper" and span.value >= min_off_s:
        return True
    return capture is not None and capture.low >= min_off_s


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 6)
