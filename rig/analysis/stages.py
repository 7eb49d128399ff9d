"""Stage boundaries resolved from events; durations with source and uncertainty."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rig.analysis.events import Event, Timebase, interval_uncertainty, line_event
from rig.analysis.lines import Line
from rig.config import Boundary, StageSpec


@dataclass(frozen=True)
class Stage:
    name: str
    start: Event | None
    end: Event | None

    @property
    def complete(self) -> bool:
        return self.start is not None and self.end is not None

    def as_dict(self) -> dict[str, Any]:
        s, e = self.start, self.end
        d: dict[str, Any] = {
            "name": self.name,
            "start_s": s.t_s if s else None,
            "end_s": e.t_s if e else None,
            "duration_s": (e.t_s - s.t_s) if s and e else None,
            "source": "+".join(dict.fromkeys(x.source for x in (s, e) if x)) or None,
            "uncertainty_s": interval_uncertainty(s, e) if s and e else None,
            "start": _boundary(s),
            "end": _boundary(e),
        }
        return d


def _boundary(ev: Event | None) -> dict[str, Any] | None:
    if ev is None:
        return None
    return {"event": ev.name, "source": ev.source, "uncertainty_s": ev.uncertainty_s}


def resolve(
    boundary: Boundary, events: list[Event], lines: list[Line], tb: Timebase
) -> Event | None:
    """The best (smallest uncertainty) event for a boundary, or None if the boot never
    reached it."""
    if boundary.kind == "power":
        return next((e for e in events if e.name == "power"), None)
    if boundary.kind == "marker":
        cands = [e for e in events if e.name == boundary.value]
        return min(cands, key=lambda e: e.uncertainty_s) if cands else None
    pattern = re.compile(boundary.value)
    for line in lines:
        if pattern.search(line.text):
            return line_event(f"console:{boundary.value}", line, tb)
    return None


def build_stages(
    specs: tuple[StageSpec, ...], events: list[Event], lines: list[Line], tb: Timebase
) -> list[Stage]:
    cache: dict[Boundary, Event | None] = {}

    def get(b: Boundary) -> Event | None:
        if b not in cache:
            cache[b] = resolve(b, events, lines, tb)
        return cache[b]

    return [Stage(s.name, get(s.start), get(s.end)) for s in specs]
