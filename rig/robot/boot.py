"""One measured boot as the Robot library keeps it, and budget time values."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

TOTAL = "power_to_ui"


@dataclass(frozen=True)
class Boot:
    report: dict[str, Any]
    folder: Path

    @property
    def run_id(self) -> str:
        return str(self.report.get("run_id"))

    def duration(self, stage: str) -> float | None:
        if stage == TOTAL:
            return self.report.get("power_to_ui_s")
        s = self.stage(stage)
        return None if s is None else s.get("duration_s")

    def stage(self, stage: str) -> dict[str, Any] | None:
        return next((s for s in self.report.get("stages", []) if s["name"] == stage), None)

    def energy(self, stage: str) -> tuple[float, float] | None:
        """(joules, uncertainty) of a stage, when a supply's readings gave it one."""
        s = self.stage(stage)
        if s is None or s.get("energy_j") is None:
            return None
        return float(s["energy_j"]), float(s.get("energy_uncertainty_j") or 0.0)


def seconds(budget: timedelta | float) -> float:
    return budget.total_seconds() if isinstance(budget, timedelta) else float(budget)
