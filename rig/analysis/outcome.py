"""A boot's outcome from evidence: the power edge, panic text, the stages reached.

The classes are `rig.outcomes.Outcome`, the console's evidence (panic text, a lost
console) `rig.analysis.evidence`; `classify` decides them in the order docs/artifacts.md
gives, with what each means. Missing hooks, landmarks and hidden tags of a boot
that reached its UI are notes; `missing_marker` needs evidence that a hook failed.
"""

from __future__ import annotations

from rig.analysis.evidence import PANIC_TEXT, ConsoleRecord
from rig.analysis.lines import Line
from rig.analysis.stages import Stage
from rig.model import MarkerScan
from rig.outcomes import RIG_FAILED, BootOutcome, Outcome


def _broken(stages: list[Stage]) -> bool:
    return any(r is not None and r.broken for s in stages for r in (s.start_res, s.end_res))


def _rigs_verdict(rig_error: str) -> BootOutcome:
    """run.json `rig_error`: one of the rig's own outcomes, or `console_lost` (which runs
    recorded there too); anything else is the rig's failure all the same."""
    try:
        verdict = BootOutcome.parse(rig_error)
    except ValueError:
        return BootOutcome(Outcome.RIG_ERROR)
    ok = verdict.kind in RIG_FAILED or verdict.kind is Outcome.CONSOLE_LOST
    return verdict if ok else BootOutcome(Outcome.RIG_ERROR)


def classify(
    scan: MarkerScan | None,
    has_capture: bool,
    lines: list[Line],
    stages: list[Stage],
    rig_error: str | None = None,
    aborted: bool = False,
    invalid: str | None = None,
    console: ConsoleRecord | None = None,
    reset: bool = False,
) -> BootOutcome:
    """The outcome the evidence gives; `console`: what the cycle recorded of its console
    (default: a console was recorded and nothing more is known of it); `reset`: the
    board started again (`lines`, `stages` are then the first boot's)."""
    if aborted:
        return BootOutcome(Outcome.INTERRUPTED)
    if rig_error:
        return _rigs_verdict(rig_error)
    if invalid:
        return BootOutcome(Outcome.INVALID_ARTIFACTS)
    if has_capture and scan is not None and not scan.power_up:
        return BootOutcome(Outcome.NO_POWER_EDGE)
    if any(PANIC_TEXT in line.text for line in lines):
        return BootOutcome(Outcome.PANIC)
    if reset:
        return BootOutcome(Outcome.RESET)
    if (console or ConsoleRecord()).lost(len(lines)):
        return BootOutcome(Outcome.CONSOLE_LOST)
    if not stages:
        return BootOutcome(Outcome.OK)
    ui = stages[-1]
    if ui.end is not None:
        return BootOutcome(Outcome.MISSING_MARKER if _broken(stages) else Outcome.OK)
    if ui.end_res is not None and (ui.end_res.how == "hidden" or ui.end_res.broken):
        return BootOutcome(Outcome.MISSING_MARKER)
    last = max((i for i, s in enumerate(stages) if s.end is not None), default=-1)
    return BootOutcome.hang_in(stages[last + 1].name)
