"""A boot's outcome, from evidence: the power edge, panic text, the stages reached.

Classes, in the order they are decided:
- `interrupted`: the operator or a signal stopped the run before the boot ended
  (run.json `aborted`): how the run ended, never one of the board's failure classes;
- the rig's own verdict from the capture (`rig_error` in run.json): `analyzer_error`
  (no capture), `console_lost` (the console port died before the UI tag),
  `rig_error` (the rig failed or was killed during the cycle);
- `invalid_artifacts`: the artifacts contradict themselves (rig/analysis/validity.py:
  console times going back, a tag before power-on or before its own edge, a sample rate
  the UART frames refute, a stage ending before it starts);
- `no_power_edge`: a capture without a debounced power-up;
- `panic`: kernel panic text on the console;
- `ok`: the boot reached its UI (the last stage's end was seen, by its hook or by what
  stands in for it). Boundaries without hooks, a landmark standing in, a hidden tag are
  notes in the report, not failures;
- `missing_marker`, only with evidence: a hook that the boot shows it has (another hook
  of the same layer fired, the kernel command line configures them, the hook printed
  an error) did not fire; or the UI's tag cannot be seen (a `quiet` kernel hides it and
  nothing else gives the UI), which says nothing of a hang;
- `console_lost`: not one console byte arrived;
- `hang_in_<stage>`: the stage after the last boundary seen (the UI was never reached).
"""

from __future__ import annotations

from rig.analysis.lines import Line
from rig.analysis.stages import Stage
from rig.model import MarkerScan

PANIC_TEXT = ("Kernel panic - not syncing", "Kernel panic")
OK = "ok"
MISSING_MARKER = "missing_marker"
#: Not the board's: the run was stopped (Ctrl-C, SIGTERM) before the boot ended.
INTERRUPTED = "interrupted"
#: Not the board's: the rig, an instrument or the disk failed during the cycle.
RIG_ERROR = "rig_error"
#: Not the board's: the artifacts contradict themselves or the contract (the evidence
#: rules that decide it live with the artifact checks; the name is fixed here).
INVALID_ARTIFACTS = "invalid_artifacts"
#: The analyzer gave no capture: the rig's instrument, not the board.
ANALYZER_ERROR = "analyzer_error"
#: Outcomes that say how the run or the rig fared, not the board: kept and shown, never
#: counted as the board's failures (soak rates, Robot rates and budgets).
NOT_THE_BOARDS = frozenset({INTERRUPTED, RIG_ERROR, INVALID_ARTIFACTS, ANALYZER_ERROR})


def is_boards(outcome: str) -> bool:
    """Does `outcome` say something about the board (ok, or one of its failures)?"""
    return outcome not in NOT_THE_BOARDS


def _broken(stages: list[Stage]) -> bool:
    return any(r is not None and r.broken for s in stages for r in (s.start_res, s.end_res))


def classify(
    scan: MarkerScan | None,
    has_capture: bool,
    lines: list[Line],
    stages: list[Stage],
    rig_error: str | None = None,
    aborted: bool = False,
    invalid: str | None = None,
) -> str:
    if aborted:
        return INTERRUPTED
    if rig_error:
        return rig_error
    if invalid:
        return INVALID_ARTIFACTS
    if has_capture and scan is not None and not scan.power_up:
        return "no_power_edge"
    if any(any(p in line.text for p in PANIC_TEXT) for line in lines):
        return "panic"
    if not stages:
        return OK
    ui = stages[-1]
    if ui.end is not None:
        return MISSING_MARKER if _broken(stages) else OK
    if not lines:
        return "console_lost"
    if ui.end_res is not None and (ui.end_res.how == "hidden" or ui.end_res.broken):
        return MISSING_MARKER
    last = max((i for i, s in enumerate(stages) if s.end is not None), default=-1)
    return f"hang_in_{stages[last + 1].name}"
