"""A boot's outcome, from evidence: the power edge, panic text, the stages reached.

The outcome classes are `rig.outcomes.Outcome`; the evidence the console gives (panic
text, a lost console) is defined once, in `rig.analysis.evidence`. Classes, in the
order they are decided:
- `interrupted`: the operator or a signal stopped the run before the boot ended
  (run.json `aborted`): how the run ended, never one of the board's failure classes;
- the rig's own verdict on its cycle (`rig_error` in run.json): `analyzer_error`
  (no capture), `rig_error` (the rig failed or was killed during the cycle); runs
  recorded before the evidence was defined once may also say `console_lost` there;
- `invalid_artifacts`: the artifacts contradict themselves (rig/analysis/validity.py:
  console times going back, a tag before power-on or before its own edge, a sample rate
  the UART frames refute, a stage ending before it starts);
- `no_power_edge`: a capture without a debounced power-up;
- `panic`: the kernel's panic line on the console (before a reset: a kernel that
  reboots on panic resets because of it);
- `reset`: the board started again during the boot (rig/analysis/reset.py: a second
  bootloader banner, a printk clock that starts again, a second power edge);
- `console_lost`: the console ended before the UI's tag (its port failed before the
  tag, or not one byte arrived), whatever a capture shows;
- `ok`: the boot reached its UI (the last stage's end was seen, by its hook or by what
  stands in for it). Boundaries without hooks, a landmark standing in, a hidden tag are
  notes in the report, not failures;
- `missing_marker`, only with evidence: a hook that the boot shows it has (another hook
  of the same layer fired, the kernel command line configures them, the hook printed
  an error) did not fire; or the UI's tag cannot be seen (a `quiet` kernel hides it and
  nothing else gives the UI), which says nothing of a hang;
- `hang_in_<stage>`: the stage after the last boundary seen (the UI was never reached).
"""

from __future__ import annotations

from rig.analysis.evidence import ConsoleRecord, is_panic
from rig.analysis.lines import Line
from rig.analysis.stages import Stage
from rig.model import MarkerScan
from rig.outcomes import RIG_FAILED, BootOutcome, Outcome


def _broken(stages: list[Stage]) -> bool:
    return any(r is not None and r.broken for s in stages for r in (s.start_res, s.end_res))


def _rigs_verdict(rig_error: str) -> BootOutcome:
    """run.json `rig_error`: one of the rig's own outcomes (older runs also wrote
    `console_lost` there); anything else is the rig's failure all the same."""
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
    if any(is_panic(line.text) for line in lines):
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
