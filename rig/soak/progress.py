"""The soak's live display: a progress bar with ETA, running per-stage p50/p95, outcomes.
Redrawn only when a cycle is journaled, while the board is held off, so a redraw never
competes with the console reader while a boot is timed.
"""

from __future__ import annotations

from collections import Counter

from rich.console import Console, Group
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from rig.commands.common import fmt_ms
from rig.model.soak import CycleRecord
from rig.names import TOTAL
from rig.outcomes import Outcome
from rig.soak.stats import finite, percentile
from rig.soak.summary import counted, samples
from rig.steps import StepEvent


class SoakDisplay:
    def __init__(
        self,
        console: Console,
        stage_names: list[str],
        cycles: int | None,
        duration_s: float | None,
        done: list[CycleRecord],
        enabled: bool = True,
    ) -> None:
        self.stage_names = stage_names
        self.by_cycles = cycles is not None
        self.records = list(done)
        self.enabled = enabled
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn() if self.by_cycles else TextColumn(""),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        total = cycles if cycles is not None else duration_s
        done = len(self.records) if self.by_cycles else 0
        self.task = self.progress.add_task("soak", total=total, completed=done)
        self.live = Live(self._render(), console=console, auto_refresh=False, transient=False)

    def notify(self, event: StepEvent) -> None:
        """Name the step just started, with its soak cycle's number (drawn with the
        next refresh)."""
        if event.kind != "start" or "cycle" in event.step.args:
            return
        n = event.step.arg("cycle")
        text = event.step.title if n is None else f"cycle {n}: {event.step.title}"
        self.progress.update(self.task, description=text)

    def add(self, rec: CycleRecord) -> None:
        self.records.append(rec)
        done = len(self.records) if self.by_cycles else float(rec.elapsed_s or 0.0)
        self.progress.update(self.task, completed=done)
        if self.enabled:
            self.live.update(self._render(), refresh=True)

    def _table(self) -> Table:
        ok = counted(self.records)  # the boots the summary will count
        t = Table(box=None, pad_edge=False, header_style="bold")
        t.add_column("stage")
        t.add_column("n", justify="right")
        t.add_column("p50 (ms)", justify="right")
        t.add_column("p95 (ms)", justify="right")
        for name in [*self.stage_names, TOTAL]:
            vals = finite(samples(ok, name))
            p50, p95 = (fmt_ms(percentile(vals, q), decimals=3) for q in (50, 95))
            t.add_row(name, str(len(vals)), p50, p95)
        return t

    def _outcomes(self) -> str:
        counts = Counter(r.outcome for r in self.records)
        parts = [
            f"[{'green' if k == Outcome.OK else 'red'}]{k}[/] {v}"
            for k, v in sorted(counts.items(), key=lambda kv: (kv[0] != Outcome.OK, str(kv[0])))
        ]
        return "outcomes: " + (", ".join(parts) or "-")

    def _render(self) -> Group:
        return Group(self.progress, self._table(), self._outcomes())

    def __enter__(self) -> SoakDisplay:
        if self.enabled:
            self.live.start(refresh=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.live.update(self._render(), refresh=True)
            self.live.stop()
            # Rich ends the last frame's line only on a terminal; in a file or a pipe
            # (a nightly job's log) what came next, an error say, was glued to it.
            if not self.live.console.is_terminal:
                self.live.console.line()
