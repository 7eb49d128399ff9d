"""A timed sub-phase of a boot stage, and the helper that times one from line indices."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rig.analysis.events import Timebase
from rig.analysis.lines import Line
from rig.analysis.parsers.timing import span


@dataclass(frozen=True)
class Phase:
    stage: str  # bootloader | kernel | userspace
    kind: str
    name: str
    line: int
    end_line: int | None
    start_s: float | None
    duration_s: float
    source: str  # printk | host | ... | "uboot" (U-Boot's own timer)
    uncertainty_s: float | None
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "kind": self.kind,
            "name": self.name,
            "line": self.line,
            "end_line": self.end_line,
            "start_s": self.start_s,
            "duration_s": self.duration_s,
            "source": self.source,
            "uncertainty_s": self.uncertainty_s,
            **self.detail,
        }


@dataclass(frozen=True)
class Timer:
    """Times phases between console lines of one boot."""

    lines: Sequence[Line]
    tb: Timebase
    char_s: float

    def between(
        self, stage: str, kind: str, name: str, a: int, b: int, minus: bool, **detail: Any
    ) -> Phase:
        """From line `a` to line `b`; `minus`: without the console time in between."""
        s = span(self.lines, a, b, self.tb, self.char_s, minus)
        return Phase(
            stage, kind, name, a, b, s.start.t_s, s.duration_s, s.source, s.uncertainty_s, detail
        )
