"""The soak loop: measured power cycles until a count or a duration, each journaled.
Cycle k is analyzed and journaled while cycle k+1 holds the board off, so its line is on
disk before k+1 powers on. A rig error reopens the instruments; after
`max_consecutive_rig_errors` in a row the soak gives up.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rig import steps
from rig.artifacts import rundir
from rig.artifacts.leftovers import release_own
from rig.config.load import RigConfig, SoakConfig
from rig.errors import RigError
from rig.measure.session import Session, reseeded
from rig.model.soak import CycleRecord, InterruptedRecord
from rig.model.summary import Limits
from rig.outcomes import Outcome
from rig.soak.journal import Journal
from rig.soak.record import finish, mark_rig_error
from rig.soak.signals import StopFlag

#: What a failing rig raises out of a cycle (a journal that cannot be written is fatal):
#: an instrument, the simulator, the disk (a cycle that could not save its run.json
#: raises RigError: its artifacts are kept, the soak goes on).
RIG_FAILURES = (RigError, OSError)

COMPLETED, INTERRUPTED, ABORTED = "completed", "interrupted", "aborted"
#: After the k-th rig error in a row the next cycle waits k times this: a passing fault
#: (a disk full for a moment, a USB device re-enumerating) must not use up
#: `max_consecutive_rig_errors` within a fraction of a second.
RETRY_PAUSE_S = 0.5
#: The step around one soak cycle; its `cycle` arg is the cycle's number.
SOAK_CYCLE_STEP = "soak cycle"


@dataclass
class SoakState:
    """What the soak has done so far, across sessions (a resume starts a new session)."""

    records: list[CycleRecord] = field(default_factory=list)
    next_cycle: int = 1
    session: int = 1
    elapsed_before_s: float = 0.0  # earlier sessions' running time
    started: float = field(default_factory=time.monotonic)
    consecutive_rig_errors: int = 0

    def elapsed_s(self) -> float:
        return self.elapsed_before_s + time.monotonic() - self.started

    def add(self, rec: CycleRecord) -> None:
        self.records.append(rec)
        self.next_cycle = max(self.next_cycle, rec.cycle + 1)
        if rec.outcome == Outcome.RIG_ERROR:
            self.consecutive_rig_errors += 1
        else:
            self.consecutive_rig_errors = 0


def unreported(folder: Path, records: list[CycleRecord]) -> list[tuple[Path, str]]:
    """The journaled rig errors whose folder has run.json but no report.json, with why."""
    out = []
    for rec in records:
        run = folder / rec.run_id
        no_report = (run / rundir.RUN).is_file() and not (run / rundir.REPORT).exists()
        if rec.outcome == Outcome.RIG_ERROR and no_report:
            out.append((run, rec.detail or "not analyzed"))
    return out


class SoakRunner:
    def __init__(
        self,
        cfg: RigConfig,
        journal: Journal,
        state: SoakState,
        limits: Limits,
        stop: StopFlag,
        spool_root: Path,
        on_record: Callable[[CycleRecord], None] = lambda _r: None,
        session: Session | None = None,
    ) -> None:
        self.cfg = cfg  # results_dir is the soak folder: cycle folders live in it
        self.soak = cfg.soak or SoakConfig()
        self.journal = journal
        self.state = state
        self.limits = limits
        self.stop = stop
        self.on_record = on_record
        self.spool_root = spool_root  # the results folder: the spool `rig run` uses too
        self._pending: tuple[int, Path, int] | None = None
        self._session = session  # given: the caller owns it (and closes it)
        # Cycles journaled as rig errors whose report a full disk had no room for, also
        # in an earlier session that ended before it had (a resume): the disk says which.
        self._unreported: list[tuple[Path, str]] = unreported(cfg.results_dir, state.records)

    def journal_cycle(
        self,
        cycle: int,
        folder: Path,
        t_ns: int | None,
        detail: str | None = None,
        recovered: bool = False,
    ) -> CycleRecord:
        try:
            rec, report = finish(
                folder,
                cycle=cycle,
                session=self.state.session,
                t_ns=t_ns,
                influx=self.cfg.influx,
                spool_root=self.spool_root,
                detail=detail,
                recovered=recovered,
            )
        except OSError as e:  # a full disk, even for the note that analysis failed
            report = None
            rec = CycleRecord(
                cycle=cycle,
                run_id=folder.name,
                session=self.state.session,
                t_ns=t_ns,
                outcome=Outcome.RIG_ERROR.value,
                stages={},
                influx="none",
                detail=f"not analyzed (artifacts kept): {e}",
                recovered=True if recovered else None,
                utc=rundir.utc_now(),
            )
        if report is None and (folder / rundir.RUN).exists():
            self._unreported.append((folder, rec.detail or "not analyzed"))
        rec.elapsed_s = round(self.state.elapsed_s(), 3)
        self.journal.append(rec)
        self.state.add(rec)
        self.on_record(rec)
        return rec

    def _catch_up(self) -> None:
        """Write the reports a full disk had no room for, once it has: the journal says
        rig_error, and so (noted in run.json first) do the report and its point."""
        left = []
        for folder, detail in self._unreported:
            try:
                mark_rig_error(folder, detail)
                _, report = finish(
                    folder,
                    cycle=1,  # the record is not journaled again: the cycle has its line
                    session=self.state.session,
                    t_ns=None,
                    influx=self.cfg.influx,
                    spool_root=self.spool_root,
                    detail=detail,
                )
            except OSError:
                report = None
            if report is None:
                left.append((folder, detail))
        self._unreported = left

    def _flush(self) -> None:
        """Journal the cycle captured last (called while the board is held off)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self.journal_cycle(*pending)
        if self._unreported:
            self._catch_up()

    def _rig_error(self, cycle: int, run_id: str, t_ns: int, err: BaseException) -> None:
        folder = self.cfg.results_dir / run_id
        detail = f"{type(err).__name__}: {err}"
        release_own(folder)  # the cycle is over: what it left is to be converted now
        # A full disk may refuse the note too: run.json then still says "running" (or
        # lacks completed_utc), which the analysis files as a rig error all the same.
        with contextlib.suppress(OSError):
            mark_rig_error(folder, detail)
        self.journal_cycle(cycle, folder, t_ns, detail=detail)

    def _stop_reason(self) -> str | None:
        if self.stop.is_set():
            return INTERRUPTED
        if self.state.consecutive_rig_errors >= self.soak.max_consecutive_rig_errors:
            return ABORTED
        captured = len(self.state.records) + (self._pending is not None)
        if self.limits.reached(captured, self.state.elapsed_s()):
            return COMPLETED
        return None

    def run(self) -> str:
        """Cycle until done; returns why it ended (completed, interrupted, aborted)."""
        # A resumed soak's simulator starts from a seed of its own (rig.measure.session).
        session = self._session or Session(
            reseeded(self.cfg, self.state.session - 1), self.soak.console_reopen_s
        )
        try:
            reason = self._loop(session)
            self._flush()
        finally:
            with contextlib.suppress(*RIG_FAILURES):
                self._flush()  # only left over when the loop raised
            session.power_off()  # whatever happened, the target ends unpowered
            if session is not self._session:
                session.close()
        return reason

    def _loop(self, session: Session) -> str:
        while (reason := self._stop_reason()) is None:
            cycle = self.state.next_cycle
            self.state.next_cycle += 1
            run_id = rundir.new_run_id()
            t_ns = time.monotonic_ns()
            try:
                # Displays take the cycle number from this step's args (rig.steps).
                with steps.step(SOAK_CYCLE_STEP, source=self, cycle=cycle):
                    result = session.cycle(
                        run_id=run_id, during_hold=self._flush, abort=self.stop.event
                    )
            except RIG_FAILURES as e:
                self._flush()
                self._rig_error(cycle, run_id, t_ns, e)
                session.reset()
                if self._stop_reason() is None:
                    self.stop.event.wait(RETRY_PAUSE_S * self.state.consecutive_rig_errors)
                continue
            if result.run.aborted:
                self._flush()
                self.journal.append(
                    InterruptedRecord(cycle=cycle, run_id=run_id, utc=rundir.utc_now())
                )
                return INTERRUPTED
            self._pending = (cycle, result.folder, t_ns)
        return reason
