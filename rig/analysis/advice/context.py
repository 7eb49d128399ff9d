"""What a rule sees (`Context`); it returns the report's `Advisory` rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rig.analysis.events import Timebase, line_event
from rig.analysis.lines import Line
from rig.analysis.pacing import wire_char_s
from rig.analysis.parsers.console import ConsoleParse
from rig.model import Chunk
from rig.model.clocks import Pacing
from rig.model.knob import Knob
from rig.model.options import AnalysisOptions
from rig.model.report import Advisory, Evidence, Initcall
from rig.model.sections import Phase


@dataclass(frozen=True)
class Context:
    lines: Sequence[Line]
    tb: Timebase
    baud: int
    parsed: ConsoleParse
    phases: tuple[Phase, ...]
    initcalls: tuple[Initcall, ...]
    options: AnalysisOptions
    pacing: Pacing
    chunks: Sequence[Chunk] = ()

    @property
    def char_s(self) -> float:
        """One character on the wire at 8N1 (start bit, 8 data bits, stop bit); none
        when the bytes arrived faster than that: the console was not paced."""
        return wire_char_s(self.pacing)

    def evidence(self, *indices: int | None) -> list[Evidence]:
        """The console lines an advisory rests on: index, text, reference time."""
        out = []
        for i in indices:
            if i is not None:
                w = line_event("", self.lines[i], self.tb)
                out.append(Evidence(i, self.lines[i].text[:200], w.t_s, w.source))
        return out

    def phases_of(self, *kinds: str) -> list[Phase]:
        return [p for p in self.phases if p.kind in kinds]


Rule = Callable[[Context], list[Advisory]]


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def from_phases(
    ctx: Context,
    rule: str,
    phases: Sequence[Phase],
    title: Callable[[float], str],
    advice: str,
    kind: str = "measured",
    detail: dict[str, Any] | None = None,
    knob: Knob | None = None,
) -> list[Advisory]:
    """One advisory for the total of `phases`, resting on their evidence lines and on the
    time between them as observed (the phases' own spans, console time included)."""
    if not phases:
        return []
    gain = sum(p.duration_s for p in phases)
    if any(p.bound == "upper_bound" for p in phases):
        kind = "upper_bound"
    observed = sum(p.observed_s if p.observed_s is not None else p.duration_s for p in phases)
    lines = sorted({i for p in phases for i in (p.line, p.end_line) if i is not None})
    sources = sorted({p.source for p in phases})
    return [
        Advisory(
            rule,
            title(gain),
            gain,
            kind,
            ctx.evidence(*lines),
            observed,
            f"time between the evidence bytes ({', '.join(sources)}), console time included",
            advice,
            detail or {},
            knob,
        )
    ]
