"""Named events from patterns the user configures for their application.

    [[analysis.app_events]]
    name = "ui_first_frame"
    regex = 'weston: first frame after (?P<ms>\\d+) ms'

Each match of a pattern on a line is one event; named groups come along as strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rig.analysis.lines import Line
from rig.model.options import AppPattern


@dataclass(frozen=True)
class AppEvent:
    line: int
    name: str
    groups: dict[str, str] = field(default_factory=dict)


def find_app_events(lines: Sequence[Line], patterns: Sequence[AppPattern]) -> list[AppEvent]:
    """Matched against the whole line text (printk prefix included), like stage patterns."""
    out: list[AppEvent] = []
    if not patterns:
        return out
    for i, ln in enumerate(lines):
        text = ln.text
        for p in patterns:
            if m := p.regex.search(text):
                groups = {k: v for k, v in m.groupdict().items() if v is not None}
                out.append(AppEvent(i, p.name, groups))
    return out
