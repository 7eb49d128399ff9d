"""What a rule sees (`Context`) and what it returns (`Advisory`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rig.analysis.events import Timebase
from rig.analysis.initcalls import Initcall
from rig.analysis.lines import Line
from rig.analysis.parsers.console import ConsoleParse
from rig.analysis.parsers.options import AnalysisOptions
from rig.analysis.parsers.phase import Phase
from rig.analysis.parsers.timing import evidence


@dataclass(frozen=True)
class Advisory:
    rule: str
    title: str
    gain_s: float
    evidence: list[dict[str, Any]]
    advice: str
    # "measured": this boot spent exactly that; "estimate": computed from counts (bytes x
    # character time); "upper_bound": the most it could give (the work may be needed).
    gain_kind: str = "measured"
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "title": self.title,
            "gain_s": self.gain_s,
            "gain_kind": self.gain_kind,
            "evidence": self.evidence,
            "advice": self.advice,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Context:
    lines: Sequence[Line]
    tb: Timebase
    baud: int
    parsed: ConsoleParse
    phases: tuple[Phase, ...]
    initcalls: tuple[Initcall, ...]
    options: AnalysisOptions

    @property
    def char_s(self) -> float:
        """One character on the wire at 8N1: start bit, 8 data bits, stop bit."""
        return 10 / self.baud if self.baud > 0 else 0.0

    def evidence(self, *indices: int | None) -> list[dict[str, Any]]:
        return [evidence(self.lines, i, self.tb) for i in indices if i is not None]

    def phases_of(self, *kinds: str) -> list[Phase]:
        return [p for p in self.phases if p.kind in kinds]


Rule = Callable[[Context], list[Advisory]]


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"
