"""A soak's summary: what summary.json holds (schema bootrig.soak-summary/1,
docs/soak.md). The soak computes one from its journal (rig/soak/summary.py); the
terminal, summary.html, the soak's InfluxDB point and Robot's `Run Soak` read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rig.model.codec import JSONObject, dump, load, opt, rest

SUMMARY_SCHEMA = "bootrig.soak-summary/1"


@dataclass
class Distribution:
    """n, min, p50, p95, p99, max, mean, stddev (sample) of some seconds; only `n`
    when there were none (rig.soak.stats.describe)."""

    n: int
    min: float | None = opt()
    p50: float | None = opt()
    p95: float | None = opt()
    p99: float | None = opt()
    max: float | None = opt()
    mean: float | None = opt()
    stddev: float | None = opt()
    extra: JSONObject = rest()


@dataclass
class StageDistribution(Distribution):
    """A stage's durations over the soak's `ok` boots; `name` is written first."""

    name: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **{k: v for k, v in dump(self).items() if k != "name"}}


@dataclass(frozen=True)
class Limits:
    """When a soak stops: after `cycles`, after `duration_s`, or whichever comes first."""

    cycles: int | None = None
    duration_s: float | None = None

    def reached(self, done: int, elapsed_s: float) -> bool:
        if self.cycles is not None and done >= self.cycles:
            return True
        return self.duration_s is not None and elapsed_s >= self.duration_s


@dataclass
class CycleCounts:
    run: int
    classified: int
    recovered: int
    interrupted: int
    unjournaled: int


@dataclass
class FailedCycle:
    cycle: int
    run_id: str
    outcome: str | None
    detail: str | None


@dataclass
class Memory:
    """The rig's resident memory (a leak shows as growth within a session)."""

    max_kb: int | None
    growth_kb: int | None


@dataclass
class BudgetCheck:
    """One percentile budget of config/budgets.toml against the soak's `ok` boots (the
    ones its statistics count): `value_s` is their percentile (null: none measured
    `what`, which is then not within)."""

    what: str  # a stage, or power_to_ui
    percentile: float
    n: int
    value_s: float | None
    budget_s: float
    within: bool


@dataclass
class SoakBudgets:
    """The percentile budgets of the soak's board and variant (docs/soak.md)."""

    file: str
    board: str
    variant: str | None
    variant_table: bool  # the file has a table for this variant
    within: bool  # every check within (also when there are none)
    checks: list[BudgetCheck]


@dataclass(kw_only=True)
class SoakSummary:
    schema: str = SUMMARY_SCHEMA
    soak_id: str
    rig: str | None
    board: str | None
    variant: str | None
    config: str | None
    started_utc: str
    updated_utc: str | None
    status: str  # completed | interrupted | aborted | running
    limits: Limits
    sessions: int
    elapsed_s: float
    cycles: CycleCounts
    outcomes: dict[str, int]
    measured: int  # cycles whose outcome is the board's
    not_measured: int  # interrupted, rig_error, invalid_artifacts, analyzer_error
    #: ok boots flagged as not a true cold boot (docs/cold-boot.md): out of the stage
    #: and power-to-UI statistics unless the summary was asked to include them.
    not_cold: int | None = opt()
    failures: int
    failure_rate: float
    failure_rates: dict[str, float]
    power_to_ui: Distribution
    stages: list[StageDistribution]
    overhead: Distribution
    influx: dict[str, int]
    rss: Memory
    failed_cycles: list[FailedCycle] = field(default_factory=list)
    #: Absent: no budgets for this board (no budgets file, or not in it).
    budgets: SoakBudgets | None = opt()
    folder: str
    influx_soak_point: str | None = opt()  # how the soak's own point was delivered
    extra: JSONObject = rest()

    def to_json(self) -> dict[str, Any]:
        out = dump(self)
        out["stages"] = [s.to_json() for s in self.stages]
        return out

    @classmethod
    def from_json(cls, obj: Any) -> SoakSummary:
        return load(cls, obj)
