"""The soak summary (summary.json), computed from the journal alone. Stage statistics
count the `ok` boots that were true cold boots (a failed or warm boot is no sample of
the same process); failure rates count every cycle (docs/soak.md).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rig.model.budgets import Budgets
from rig.model.soak import (
    CycleRecord,
    EndRecord,
    HeaderRecord,
    InterruptedRecord,
    OtherRecord,
    Record,
    ResumeRecord,
)
from rig.model.summary import (
    CycleCounts,
    FailedCycle,
    Limits,
    Memory,
    SoakSummary,
    StageDistribution,
)
from rig.names import TOTAL
from rig.outcomes import Outcome
from rig.soak.budgets import verdicts
from rig.soak.recover import orphans
from rig.soak.stats import describe, failure_rates

SUMMARY_JSON = "summary.json"
SUMMARY_HTML = "summary.html"


def cycle_records(records: list[Record]) -> list[CycleRecord]:
    return [r for r in records if isinstance(r, CycleRecord)]


def _rss(cycles: list[CycleRecord]) -> Memory:
    """Resident memory per session, first cycle to last (a leak shows as growth)."""
    by_session: dict[int, list[int]] = {}
    for r in cycles:
        if r.rss_kb is not None:
            by_session.setdefault(r.session or 1, []).append(r.rss_kb)
    growth = [v[-1] - v[0] for v in by_session.values() if v]
    return Memory(
        max((max(v) for v in by_session.values()), default=None), max(growth, default=None)
    )


def status(records: list[Record]) -> str:
    """How the last session ended: completed, interrupted, aborted, or running (no end
    line yet)."""
    last_end = next((r for r in reversed(records) if isinstance(r, EndRecord | ResumeRecord)), None)
    return last_end.reason if isinstance(last_end, EndRecord) else "running"


def counted(cycles: list[CycleRecord], include_warm: bool = False) -> list[CycleRecord]:
    """The boots the statistics count: `ok`, and a true cold boot unless `include_warm`."""
    ok = [r for r in cycles if r.outcome == Outcome.OK]
    return [r for r in ok if include_warm or r.cold_boot is not False]


def samples(boots: list[CycleRecord], name: str) -> list[float]:
    """A stage's durations over `boots` (or their power-to-UI): what the statistics,
    the histograms and the budgets are all made of."""
    if name == TOTAL:
        return [r.power_to_ui_s for r in boots if r.power_to_ui_s is not None]
    return [v for r in boots if (v := r.stages.get(name)) is not None]


def summarize(
    folder: Path,
    records: list[Record],
    include_warm: bool = False,
    budgets: Budgets | None = None,
) -> SoakSummary:
    """The summary of a soak's journal; with `budgets` (its board's and variant's), the
    verdict of each percentile budget over the same boots as the statistics."""
    header = records[0]
    assert isinstance(header, HeaderRecord)  # rig.soak.journal reads no other first line
    cycles = cycle_records(records)
    all_ok = [r for r in cycles if r.outcome == Outcome.OK]
    ok = counted(cycles, include_warm)
    stage_names = list(header.stages or [])
    for r in cycles:  # stages the config did not name (an older journal) still count
        stage_names += [n for n in r.stages if n not in stage_names]
    values = {name: samples(ok, name) for name in [*stage_names, TOTAL]}
    stages = [StageDistribution(name=name, **vars(describe(values[name]))) for name in stage_names]
    overheads = [r.overhead_s for r in cycles if isinstance(r.overhead_s, float)]
    rates = failure_rates(r.outcome for r in cycles)
    ends = [r for r in records if isinstance(r, EndRecord)]
    influx = Counter(("none" if r.influx is None else r.influx).split(":", 1)[0] for r in cycles)
    elapsed = [r.elapsed_s or 0.0 for r in [*cycles, *ends]]
    return SoakSummary(
        soak_id=header.soak_id,
        rig=header.rig,
        board=header.board,
        variant=header.variant,
        config=header.config,
        started_utc=header.started_utc,
        updated_utc=_utc(records[-1]),
        status=status(records),
        limits=Limits(header.cycles, header.duration_s),
        sessions=1 + sum(1 for r in records if isinstance(r, ResumeRecord)),
        elapsed_s=max(elapsed, default=0.0),
        cycles=CycleCounts(
            run=len(cycles),
            classified=sum(1 for r in cycles if r.outcome),
            recovered=sum(1 for r in cycles if r.recovered),
            interrupted=sum(1 for r in records if isinstance(r, InterruptedRecord)),
            unjournaled=len(orphans(folder, records)),
        ),
        outcomes=rates.counts,
        measured=rates.measured,
        not_measured=rates.not_measured,
        not_cold=sum(1 for r in all_ok if r.cold_boot is False),
        failures=rates.failures,
        failure_rate=rates.failure_rate,
        failure_rates=rates.rates,
        power_to_ui=describe(values[TOTAL]),
        stages=stages,
        overhead=describe(overheads),
        influx=dict(sorted(influx.items())),
        rss=_rss(cycles),
        failed_cycles=[
            FailedCycle(r.cycle, r.run_id, r.outcome, r.detail)
            for r in cycles
            if r.outcome != Outcome.OK
        ],
        budgets=verdicts(budgets, values) if budgets is not None else None,
        folder=str(folder),
    )


def _utc(record: Record) -> str | None:
    """When a line was written; a kind this rig does not know may say so too."""
    if isinstance(record, OtherRecord):
        utc = record.extra.get("utc")
        return utc if isinstance(utc, str) else None
    return record.utc
