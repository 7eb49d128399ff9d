"""The boots `rig compare` (and Robot's `Stage Should Not Regress`) compares, as sources
and sides: the warm-up rule applied, only `ok` cold boots counted, every other boot
listed with its reason (docs/compare.md, "Warm-up rule")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig.model.report import Report
from rig.names import TOTAL
from rig.outcomes import Outcome

#: The default warm-up rule: the first boot of each sequence.
DEFAULT_WARMUP = 1


@dataclass(frozen=True)
class Boot:
    """One boot as the comparison sees it: its durations by stage (and power_to_ui)."""

    id: str
    where: str  # its folder, or "influx"
    outcome: str
    durations: dict[str, float]
    order: tuple[str, ...] = ()  # stage names in boot order
    not_cold: str | None = None  # why it was not a true cold boot, when it was not


@dataclass
class Source:
    spec: str  # as given
    kind: str  # run | soak | runs | influx
    location: str  # resolved folder or the query's selector
    boots: list[Boot] = field(default_factory=list)  # counted
    warmup: list[Boot] = field(default_factory=list)
    excluded: list[tuple[str, str]] = field(default_factory=list)  # (boot id, reason)

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "kind": self.kind,
            "location": self.location,
            "boots": len(self.boots),
            "warmup": [b.id for b in self.warmup],
            "excluded": [{"boot": i, "reason": r} for i, r in self.excluded],
        }


@dataclass
class Side:
    name: str  # "before" | "after"
    sources: list[Source]

    @property
    def boots(self) -> list[Boot]:
        return [b for s in self.sources for b in s.boots]

    def samples(self) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for b in self.boots:
            for name, d in b.durations.items():
                out.setdefault(name, []).append(d)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"boots": len(self.boots), "sources": [s.to_json() for s in self.sources]}


def stage_names(*sides: Side) -> list[str]:
    """Stage names in boot order as the boots give them, power_to_ui last."""
    names: list[str] = []
    for side in sides:
        for b in side.boots:
            names += [n for n in b.order if n not in names]
    return [*names, TOTAL]


def report_boot(report: Report, where: str) -> Boot:
    durations = {s.name: float(s.duration_s) for s in report.stages if s.duration_s is not None}
    if report.power_to_ui_s is not None:
        durations[TOTAL] = float(report.power_to_ui_s)
    order = tuple(s.name for s in report.stages)
    cold = report.cold_boot
    # The reasons' codes (`back_powered`, `short_off`): the report has the figures.
    codes = ", ".join(r.split(":", 1)[0] for r in cold.reasons) if cold else ""
    why = (codes or "flagged") if report.not_cold else None
    return Boot(
        str(report.run_id or Path(where).name), where, report.outcome, durations, order, why
    )


def split(boots: Sequence[Boot], source: Source, warmup: int, include_warm: bool = False) -> Source:
    """Fill `source` from a sequence of boots in time order: warm-up first, then the
    boots that count and those that do not."""
    source.warmup = list(boots[:warmup])
    for b in boots[warmup:]:
        if b.outcome != Outcome.OK:
            source.excluded.append((b.id, f"outcome {b.outcome}"))
        elif TOTAL not in b.durations:
            source.excluded.append((b.id, "no power-to-UI"))
        elif b.not_cold is not None and not include_warm:
            source.excluded.append((b.id, f"not a cold boot ({b.not_cold})"))
        else:
            source.boots.append(b)
    return source
