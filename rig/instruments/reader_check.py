"""The console reader's self-check: how late the host let it see each read. A tick
overdue, or a probe byte through its own pty in flight, longer than LATE_NS shows the
reader held up; a read outside such windows is late by at most `bound_s`, one within
by its `held` window (docs/instruments.md, "The console reader")."""

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
    """What the reader logged about itself; `summary()` is run.json's `console_reader`."""

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
