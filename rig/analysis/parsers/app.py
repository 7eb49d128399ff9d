"""Named events from patterns the user configures for their application.

    [[analysis.app_events]]
    name = "ui_first_frame"
    regex = 'weston: first frame after (?P<ms>\\d+) ms'

Each match of a pattern on a line is one event; named groups come along as strings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rig.analysis.lines import Line


@dataclass(frozen=True)
class AppPattern:
    name: str
    regex: re.Pattern[str]


@dataclass(frozen=True)
class AppEvent:
    line: int
    name: str
    groups: dict[str, str] = field(default_factory=dict)


def compile_patterns(specs: Iterable[Mapping[str, str] | AppPattern]) -> list[AppPattern]:
    """`[{name, regex}, ...]` -> patterns; a bad regex is an error naming the pattern."""
    out: list[AppPattern] = []
    for spec in specs:
        if isinstance(spec, AppPattern):
            out.append(spec)
            continue
        name, regex = spec.get("name"), spec.get("regex")
        if not name or regex is None:
            raise ValueError(f"app event pattern {dict(spec)!r}: expected keys 'name' and 'regex'")
        try:
            out.append(AppPattern(name, re.compile(regex)))
        except re.error as e:
            raise ValueError(f"app event {name!r}: invalid regex {regex!r}: {e}") from e
    return out


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
