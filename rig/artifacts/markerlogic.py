"""The `bootmarkers` decoder's logic, replayed on transition lists instead of samples:
`decoders/bootmarkers/pd.py` statement for statement, with libsigrokdecode 0.5.3's
`wait()` made explicit (docs/engines.md). Only the annotations `scan_markers` reads are
produced, in the decoder's order."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rig.names import MARKERS

_NEVER = math.inf


@dataclass
class Found:
    """What the annotations would say (the warnings in the order sigrok-cli prints them)."""

    power_up: list[int] = field(default_factory=list)
    power_down: list[int] = field(default_factory=list)
    edges: dict[str, list[int]] = field(default_factory=dict)
    bounces: int = 0
    warnings: list[str] = field(default_factory=list)


def debounce_samples(debounce_us: float, samplerate: int) -> int:
    # Exactly the decoder's arithmetic (round() first: 1000 us at 1 MHz is 1000, not 1001).
    return max(1, math.ceil(round(float(debounce_us) * samplerate / 1e6, 6)))


class _Replay:
    def __init__(self, present: list[str], found: Found) -> None:
        self.found = found
        self.boot: int | None = None
        self.powered = False
        self.toggles = dict.fromkeys(MARKERS, 0)
        self.burst: list[int] | None = None
        self.held: list[tuple[str, int]] = []
        for m in present:
            found.edges[m] = []

    def close_burst(self) -> None:
        if self.burst:
            self.found.bounces += self.burst[2]
            self.burst = None

    def power_edge(self, ss: int, level: int) -> None:
        if level:
            self.boot, self.powered = ss, True
            self.toggles = dict.fromkeys(MARKERS, 0)
            self.found.power_up.append(ss)
        else:
            self.boot = None
            self.found.power_down.append(ss)

    def marker_edge(self, name: str, ss: int) -> None:
        self.found.edges[name].append(ss)
        if self.boot is not None:
            self.toggles[name] += 1
            if self.toggles[name] > 1:
                self.warn(ss, f"marker {name} toggled {self.toggles[name]} times this boot")
        elif not self.powered:
            self.warn(ss, f"marker {name} before power-up")

    def warn(self, ss: int, text: str) -> None:
        self.found.warnings.append(f"sample {ss}: {text}")  # as scan_markers words it

    def flush_held(self) -> None:
        for edge in self.held:
            self.marker_edge(*edge)
        self.held = []


def replay(
    samples: int,
    debounce: int,
    power: np.ndarray,
    power0: int,
    markers: dict[str, np.ndarray],
) -> Found:
    """Replay the decoder. `markers`: each present marker's transition samples.

    Edge directions only change annotation texts the rig does not read, so no levels.
    """
    present = [m for m in MARKERS if m in markers]  # the decoder's channel order
    found = Found()
    st = _Replay(present, found)
    st.powered = bool(power0)  # the decoder's: a rail up at sample 0 has been up
    if samples == 0:
        return found
    # All marker transitions merged in sample order; ties keep the decoder's channel order.
    m_at = np.concatenate([markers[m] for m in present] or [np.zeros(0, np.int64)])
    m_ch = np.concatenate([np.full(len(markers[m]), k) for k, m in enumerate(present)] or [[]])
    order = np.lexsort((m_ch, m_at))
    m_at, m_ch = m_at[order].tolist(), m_ch[order].astype(int).tolist()
    p_at = power.tolist()
    pi = mi = 0
    stable = power0
    cand: int | None = None
    now = 0
    while True:
        deadline = cand if cand is not None else st.burst[1] if st.burst else None
        skip_at = max(now, deadline + debounce) if deadline is not None else _NEVER
        nxt_p = p_at[pi] if pi < len(p_at) else _NEVER
        nxt_m = m_at[mi] if mi < len(m_at) else _NEVER
        at = min(nxt_p, nxt_m, skip_at)
        if at >= samples:
            return found
        now = int(at)
        if skip_at == now:
            st.close_burst()
            if cand is not None:  # held long enough: a real power edge
                stable = 1 - stable
                st.power_edge(cand, stable)
                cand = None
                st.flush_held()
        if nxt_p == now:
            pi += 1
            if cand is None:
                cand = now
            else:  # fell back inside the debounce time: bounce
                first = st.burst[0] if st.burst else cand
                count = st.burst[2] + 1 if st.burst else 1
                st.burst = [first, now, count]
                cand = None
                st.flush_held()
        while mi < len(m_at) and m_at[mi] == now:
            name = present[m_ch[mi]]
            mi += 1
            if cand is None:
                st.marker_edge(name, now)
            else:  # which boot it belongs to is known once the power edge settles
                st.held.append((name, now))
