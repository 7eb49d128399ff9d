"""One measured boot as the Robot library keeps it, the outcome a test expects, and
budget time values."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from rig.model.report import Report
from rig.names import TOTAL
from rig.outcomes import HANG_PREFIX, BootOutcome, Outcome


@dataclass(frozen=True)
class Boot:
    report: Report
    folder: Path

    @property
    def run_id(self) -> str:
        return str(self.report.run_id)

    @property
    def outcome(self) -> str:
        return self.report.outcome

    def duration(self, stage: str) -> float | None:
        if stage == TOTAL:
            return self.report.power_to_ui_s
        s = self.report.stage(stage)
        return None if s is None else s.duration_s

    def energy(self, stage: str) -> tuple[float, float] | None:
        """(joules, uncertainty) of a stage, when a supply's readings gave it one."""
        s = self.report.stage(stage)
        if s is None or s.energy_j is None:
            return None
        return float(s.energy_j), float(s.energy_uncertainty_j or 0.0)


def expected_outcome(outcome: Outcome | str, stage: str | None) -> tuple[Outcome, str | None]:
    """The class and stage `Boot Outcome Should Be` checks: ``hang_in`` with
    ``stage=kernel`` or ``hang_in_kernel``; ``hang_in`` alone is a hang in any stage.
    Robot hands a string over as it is (the union has `str`): a class is matched by
    value or name, any case, as Robot matches enum members."""
    key = outcome.strip().lower().replace(" ", "_")
    if not isinstance(outcome, Outcome) and key in {o.value for o in Outcome}:
        outcome = Outcome(key)
    if not isinstance(outcome, Outcome):
        parsed = BootOutcome.parse(outcome)  # ValueError: the message lists the outcomes
        if stage and parsed.stage and stage != parsed.stage:
            raise ValueError(f"{outcome} names stage {parsed.stage}, stage= says {stage}")
        outcome, stage = parsed.kind, stage or parsed.stage
    if stage and outcome is not Outcome.HANG_IN:
        raise ValueError(f"stage={stage}: only hang_in names a stage, not {outcome}")
    return outcome, stage or None


def outcome_is(found: str, kind: Outcome, stage: str | None) -> bool:
    """Is the report's outcome `found` of class `kind` (and in `stage`, when given)?"""
    try:
        got = BootOutcome.parse(found)
    except ValueError:
        return False  # not an outcome at all: no expectation matches it
    return got.kind is kind and (stage is None or got.stage == stage)


def describe_outcome(kind: Outcome, stage: str | None) -> str:
    if kind is Outcome.HANG_IN:
        return f"{HANG_PREFIX}{stage or '<any stage>'}"
    return kind.value


def seconds(budget: timedelta | float) -> float:
    return budget.total_seconds() if isinstance(budget, timedelta) else float(budget)
