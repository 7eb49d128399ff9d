"""A whole soak session: open (or resume) the journal, recover, cycle, summarise; for
`rig soak` and Robot's `Run Soak` (exit codes: docs/soak.md, "Exit codes")."""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from rig import steps
from rig.artifacts import rundir
from rig.config.load import RigConfig, SoakConfig
from rig.errors import EXIT_BOARD_FAILED, EXIT_OK, EXIT_RIG_FAILED, InputError, RigError
from rig.model.budgets import Budgets
from rig.model.soak import EndRecord, ResumeRecord
from rig.model.summary import Limits, SoakSummary
from rig.names import JOURNAL
from rig.sinks.html import soak as html
from rig.sinks.influx.client import Client, InfluxError
from rig.sinks.influx.replay import replay
from rig.sinks.influx.soak import deliver_soak_point
from rig.sinks.influx.spool import Spool, spool_dir
from rig.soak import recover
from rig.soak.journal import read_records
from rig.soak.progress import SoakDisplay
from rig.soak.runner import ABORTED, INTERRUPTED, SoakRunner
from rig.soak.signals import StopFlag
from rig.soak.start import Opened, begin, header, new_soak_id, reopen
from rig.soak.summary import SUMMARY_HTML, SUMMARY_JSON, cycle_records, summarize

#: Cycles of a soak given neither cycles nor a duration (nor `[soak]` in the config):
#: `rig soak` and Robot's `Run Soak` alike.
DEFAULT_CYCLES = 100


@dataclass
class SoakResult:
    folder: Path
    reason: str  # completed | interrupted | aborted
    exit_code: int
    summary: SoakSummary

    @property
    def journal(self) -> Path:
        return self.folder / JOURNAL

    @property
    def html(self) -> Path:
        return self.folder / SUMMARY_HTML


def _finish(
    opened: Opened, cfg: RigConfig, reason: str, elapsed_s: float, budgets: Budgets | None
) -> SoakSummary:
    opened.journal.append(
        EndRecord(
            reason=reason,
            session=opened.state.session,
            elapsed_s=round(elapsed_s, 3),
            utc=rundir.utc_now(),
        )
    )
    records, _ = read_records(opened.folder / JOURNAL)
    summary = summarize(opened.folder, records, budgets=budgets)
    if cfg.influx is not None:
        # What an outage left in the spool goes now, so the soak ends with its points in.
        spool = Spool(spool_dir(cfg.results_dir))
        if spool.paths():
            with contextlib.suppress(InfluxError, OSError), Client(cfg.influx) as client:
                replay(client, spool, cfg.influx.batch_points)
        point = deliver_soak_point(summary, cfg.influx, cfg.results_dir)
        summary.influx_soak_point = point.note
    rundir.write_json(opened.folder / SUMMARY_JSON, summary.to_json())
    (opened.folder / SUMMARY_HTML).write_text(
        html.render(summary, cycle_records(records)), encoding="utf-8"
    )
    return summary


def exit_code(reason: str, summary: SoakSummary, max_failure_rate: float, stop: StopFlag) -> int:
    if reason == INTERRUPTED:
        return stop.exit_code
    if reason == ABORTED:  # gave up after rig errors in a row
        return EXIT_RIG_FAILED
    over_budget = summary.budgets is not None and not summary.budgets.within
    return EXIT_BOARD_FAILED if summary.failure_rate > max_failure_rate or over_budget else EXIT_OK


def run_soak(
    cfg: RigConfig,
    *,
    limits: Limits | None = None,
    soak_id: str | None = None,
    resume: Path | None = None,
    board: Path | None = None,
    max_failure_rate: float | None = None,
    console: Console | None = None,
    show: bool = True,
    handle_signals: bool = True,
    budgets: Budgets | None = None,
) -> SoakResult:
    """Run (or resume, `resume` = the soak folder) a soak. `budgets` (the board's and
    variant's, `rig.soak.budgets.soak_budgets`) are judged at the end."""
    soak_cfg = cfg.soak or SoakConfig()
    if max_failure_rate is not None and not 0.0 <= max_failure_rate <= 1.0:
        # Checked before the journal exists: a NaN passed click's range, was refused by
        # the journal's header (no NaN in it) and left an empty soak folder behind.
        raise InputError(f"max failure rate {max_failure_rate}: expected a fraction 0..1")
    if resume is not None:
        opened = reopen(resume)
        head = opened.header
        limits = Limits(
            (limits.cycles if limits and limits.cycles else None) or head.cycles,
            (limits.duration_s if limits and limits.duration_s else None) or head.duration_s,
        )
        rate = max_failure_rate if max_failure_rate is not None else head.max_failure_rate
    else:
        limits = limits or Limits(soak_cfg.cycles, soak_cfg.duration_s)
        if limits.cycles is None and limits.duration_s is None:
            limits = Limits(cycles=DEFAULT_CYCLES)
        rate = max_failure_rate if max_failure_rate is not None else soak_cfg.max_failure_rate
        sid = soak_id or new_soak_id()
        opened = begin(cfg.results_dir / sid, header(cfg, sid, limits, board, rate or 0.0))
    rate = float(rate or 0.0)
    stop = StopFlag()
    display = SoakDisplay(
        console or Console(stderr=True),
        [s.name for s in cfg.stages],
        limits.cycles,
        limits.duration_s,
        opened.state.records,
        enabled=show,
    )
    runner = SoakRunner(
        dataclasses.replace(cfg, results_dir=opened.folder),
        opened.journal,
        opened.state,
        limits,
        stop,
        spool_root=cfg.results_dir,
        on_record=display.add,
    )
    try:
        with contextlib.ExitStack() as stack:
            if handle_signals:
                stack.enter_context(stop.installed())
            stack.enter_context(display)
            stack.enter_context(steps.subscribed(display.notify))
            if resume is not None:
                _resume(opened, runner)
            try:
                reason = runner.run()
            except BaseException:
                # Best effort (the journal itself may be what failed): say how it ended.
                end = EndRecord(
                    reason=INTERRUPTED if stop.is_set() else ABORTED, utc=rundir.utc_now()
                )
                with contextlib.suppress(RigError):
                    opened.journal.append(end)
                raise
        summary = _finish(opened, cfg, reason, opened.state.elapsed_s(), budgets)
    finally:
        opened.journal.close()
    return SoakResult(opened.folder, reason, exit_code(reason, summary, rate, stop), summary)


def _resume(opened: Opened, runner: SoakRunner) -> None:
    """Journal the resume, then every cycle folder the journal does not know yet."""
    found = recover.orphans(opened.folder, opened.records)
    opened.journal.append(
        ResumeRecord(
            session=opened.state.session,
            cut_bytes=opened.cut_bytes,
            unjournaled=[p.name for p in found],
            utc=rundir.utc_now(),
        )
    )
    for orphan in found:
        detail = recover.prepare(orphan)
        cycle = opened.state.next_cycle
        opened.state.next_cycle += 1
        runner.journal_cycle(cycle, orphan, None, detail=detail, recovered=True)
