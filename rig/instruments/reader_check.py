"""The console reader's self-check: how late the host let it see each read.

Two things on the host stand between a byte reaching the host and its stamp: the
kernel's tty layer, which hands received bytes to readers from a worker thread (for a
USB-serial adapter and for a pty alike), and the reader's own wake-up. Both are
scheduled, and a busy host delays both. The reader measures them as it goes
(reader_proc.py):

- its waits also end at ticks, one PROBE_S after the last: a wake at t with the tick
  already past shows it was unresponsive from the tick to t;
- at every tick it writes a probe byte into a pty pair of its own and waits for it too:
  a probe in flight longer than LATE_NS shows the tty layer (or the reader) held bytes
  from its write until it was seen.

Where neither shows anything, the host was responsive: a byte written then is followed
within PROBE_S (+ LATE_NS) by a probe that reaches the reader within LATE_NS, and, when
the host holds bytes in its tty layer, it holds both (first in first out through the
same workers), so a read is late by at most PROBE_S + 2 LATE_NS (`bound_s`). Bytes
written while the host was unresponsive (a merged run of such spans, from its start)
may reach the reader until a probe written after the run is seen: a read stamped within
that window is late by at most PROBE_S + its stamp - the window's start. The windows
that hold a read later than `bound_s` that way are listed (`held`).

That is the reader's own lateness, bounded, and the tty layer's as far as the probes
share its fate. A loaded host also holds one tty's bytes now and then while another's
go through (the kernel hands each tty's bytes on as a separate work item; 40-160 ms
seen on a 2-core host at load 9): no probe sees that, and like an adapter's latency it
is covered only as far as the host band covers its lines (docs/analysis.md).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

#: The self-check's tick: ~1300 wakes a second on an idle line, ~2 % of a core.
PROBE_S = 0.75e-3
#: A tick overdue or a probe in flight longer than this shows the host unresponsive.
LATE_NS = 250_000
#: Every read not listed is late by at most this.
BOUND_S = PROBE_S + 2 * LATE_NS / 1e9


@dataclass
class ReaderCheck:
    """What the reader logged about itself; `summary()` is run.json's `console_reader`.
    Standard library only: the reader's own process imports nothing else."""

    scheduling: str = "SCHED_OTHER"
    priority: int = 0
    realtime_error: str | None = None
    waits: str = "select"  # "select" (own ticks and probes) | "pyserial" (its timeout)
    ticks: list[tuple[int, int]] = field(default_factory=list)  # (tick, the wake that saw it)
    probe_w: list[int] = field(default_factory=list)  # probe bytes written (ns)...
    probe_seen: list[int] = field(default_factory=list)  # ...and seen, in order
    reads: list[tuple[int, int]] = field(default_factory=list)  # (stamp, the wake before)
    stopped_ns: int = 0

    def unresponsive(self) -> list[tuple[int, int]]:
        """Merged spans in which the host showed itself late (gaps under a tick closed:
        nothing showed it responsive in between)."""
        seen = self.probe_seen + [self.stopped_ns] * (len(self.probe_w) - len(self.probe_seen))
        spans = [(a, b) for a, b in self.ticks if b - a > LATE_NS]
        spans += [(w, s) for w, s in zip(self.probe_w, seen, strict=True) if s - w > LATE_NS]
        merged: list[tuple[int, int]] = []
        for a, b in sorted(spans):
            if merged and a <= merged[-1][1] + PROBE_S * 1e9:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        return merged

    def held(self) -> list[list[int]]:
        """[from ns, until ns] of every unresponsive window that a read fell into: a
        probe written after the window's span and seen before a read clears it (that
        read's bytes were written after the span: one tty path, first in first out)."""
        seen = self.probe_seen + [self.stopped_ns] * (len(self.probe_w) - len(self.probe_seen))
        stamps = sorted(t for t, _ in self.reads)
        out = []
        for a, b in self.unresponsive():
            k = bisect.bisect_left(self.probe_w, b)
            until = seen[k] if k < len(seen) else self.stopped_ns
            # Reads within 2 LATE_NS of the start are inside bound_s anyway.
            i = bisect.bisect_right(stamps, a + 2 * LATE_NS)
            if i < len(stamps) and stamps[i] <= until:
                out.append([a, until])
        return out

    def summary(self) -> dict[str, Any]:
        wake = sorted(b - a for a, b in self.ticks)
        tty = sorted(s - w for w, s in zip(self.probe_w, self.probe_seen, strict=False))
        select = self.waits == "select"
        return {
            "scheduling": self.scheduling,
            "priority": self.priority,
            "realtime_error": self.realtime_error,
            "waits": self.waits,
            "probe_s": PROBE_S,
            "bound_s": BOUND_S if select else None,
            "probes": len(wake),
            "wake_late_us": _quantiles(wake),
            "tty_late_us": _quantiles(tty),
            "held": self.held() if select else [],
        }


def _quantiles(ns: list[int]) -> dict[str, float] | None:
    """p50, p99 and max of sorted ns values, in µs."""
    if not ns:
        return None
    return {
        "p50": ns[len(ns) // 2] / 1e3,
        "p99": ns[min(len(ns) - 1, int(0.99 * len(ns)))] / 1e3,
        "max": ns[-1] / 1e3,
    }
