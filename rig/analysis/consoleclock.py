"""Console-only runs: the host clock is the reference (t = 0 at the power-on command).

The printk clock maps onto the host clock through the lower envelope of the stamped
lines' latest emissions (lines queued or held sit above it and are left out); the
envelope's own latency is unknown, so the map moves earlier by half its bound and
states the other half (docs/analysis.md, "The host clock", console-only runs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from rig.analysis.clockfit import PRINTK_RESOLUTION_S, Anchor, EnvelopeFit
from rig.analysis.hostclock import (
    DEFAULT_BAND_S,
    HostMap,
    beta_margin,
    drain,
    garbled_stamps,
    keep_latencies,
    latest,
    supported_floor,
    timer_high,
    wire_time,
    with_bounds,
)
from rig.analysis.lines import Line, kernel_backlog
from rig.model.clocks import Pacing, ReadBound

#: Fewer stamped lines than this cannot place the printk clock.
MIN_STAMPED = 3
#: The least latency no console-only run can see: it shifts every arrival alike. USB
#: full-speed frames are 1 ms; a pty or a network console is faster.
LATENCY_FLOOR_S = 1e-3


def floor_fit(anchors: Sequence[Anchor]) -> EnvelopeFit:
    """The line of slope 1 under every point, through the lowest that others support
    (`supported_floor`: a garbled stamp cannot set it); a fitted slope would
    tilt with the latencies (1000s of ppm over a short boot); the kernel's drift against
    the host clock is a crystal's, and stated as such (`x_ref`)."""
    floor = supported_floor([a.y - a.x for a in anchors])
    ref = min((a for a in anchors if a.y - a.x >= floor), key=lambda a: a.y - a.x)
    offset = ref.y - ref.x
    res = tuple(a.y - (offset + a.x) for a in anchors)
    xm = sum(a.x for a in anchors) / len(anchors)
    return EnvelopeFit(offset, 1.0, tuple(anchors), res, 0.0, xm, x_ref=ref.x)


def console_clocks(
    lines: Sequence[Line],
    power_on_ns: int,
    char_s: float,
    pacing: Pacing,
    reads: ReadBound,
) -> tuple[HostMap, EnvelopeFit | None]:
    """`reads`: the lines the reader read late set neither the envelope nor the band."""
    base = power_on_ns / 1e9
    # A paced first byte reaches the adapter a character time after it left.
    low = base + (char_s if pacing.paced else 0.0)
    wire = wire_time(pacing, char_s)
    hi = latest(lines, low, wire)
    garbled = garbled_stamps(lines)
    # Stamped, but it left when the console registered: an anchor, no latency sample.
    backlog = kernel_backlog(lines)
    anchors = {
        ln.index: Anchor(f"line {ln.index}", ln.printk_ts, hi[ln.index])
        for ln in lines
        if ln.printk_ts is not None and ln.index not in garbled
    }
    on_time = {i: a for i, a in anchors.items() if i not in reads.lines}
    if len(on_time) >= MIN_STAMPED:  # else better an envelope late reads widened than none
        anchors = on_time
    fallback = HostMap(low, low + DEFAULT_BAND_S, 0, char_s, reads=reads)
    if len(anchors) < MIN_STAMPED:
        return with_bounds(fallback, lines, {}, pacing), None
    # The latency samples the band comes from (line -> delay); none until a pass finds
    # at least MIN_STAMPED: the first envelope is then of every anchor.
    kept: dict[int, float] = {}
    high: float | None = None
    env: EnvelopeFit | None = None
    for _ in range(3):  # envelope of the kept lines, then which lines it keeps
        env = floor_fit([anchors[i] for i in sorted(kept or anchors)])
        produced = {i: env(a.x) for i, a in anchors.items()}
        fwd = drain(lines, produced, wire, high, latest_s=hi)
        delays = {i: lines[i].t_ns / 1e9 - fwd.emitted[i] for i in fwd.samples - backlog}
        new = keep_latencies(delays)
        if len(new) < MIN_STAMPED:
            break
        kept = new
        top = max(kept.values())
        high = top + LATENCY_FLOOR_S + 2 * beta_margin(top - low, len(kept))
    assert env is not None
    if not kept:
        # Too few latency samples (the rest the kernel's backlog or read late): the
        # envelope's floor is then set by lines that left late, and nothing bounds how
        # late, so there is no printk map, as with too few stamped lines.
        return with_bounds(fallback, lines, {}, pacing), None
    n = len(kept)
    spread = max(kept.values()) - low  # kept holds at least MIN_STAMPED here
    # Unknown pacing placed lines at their arrival: a paced first byte's own character
    # time is then part of the least latency too.
    floor = LATENCY_FLOOR_S + (char_s if pacing.verdict == "unknown" else 0.0)
    margin = floor + beta_margin(spread, n)
    # The least latency is in [0, margin]: centre the printk map in it.
    pk = dataclasses.replace(
        env,
        offset=env.offset - margin / 2,
        band_u=margin / 2 + PRINTK_RESOLUTION_S,
        rejected=tuple(a for i, a in anchors.items() if i not in kept),
    )
    host = HostMap(
        low,
        low + spread + 2 * margin,
        n,
        char_s,
        tuple(sorted(d - low for d in kept.values())),
        len(anchors) - n,
        least_s=low,
        garbled=garbled,
        reads=reads,
    )
    host = dataclasses.replace(host, high_s=timer_high(host, pacing))
    produced = {i: env(a.x) - margin for i, a in anchors.items()}
    return with_bounds(host, lines, produced, pacing), pk
