"""A boot's outcome, from evidence: the power edge, panic text, the stages reached.

Classes, in the order they are decided:
- the rig's own verdict from the capture (`rig_error` in run.json): `analyzer_error`
  (no capture), `console_lost` (the console port died before the UI tag),
  `rig_error` (the rig failed or was killed during the cycle);
- `no_power_edge`: a capture without a debounced power-up;
- `panic`: kernel panic text on the console;
- `ok`: every stage boundary was seen;
- `console_lost`: not one console byte arrived;
- `missing_marker`: a boundary was never seen although a later one was (the boot went
  on; a hook did not fire);
- `hang_in_<stage>`: the first stage whose end was never reached, with nothing after.
"""

from __future__ import annotations

from rig.analysis.lines import Line
from rig.analysis.stages import Stage
from rig.model import MarkerScan

PANIC_TEXT = ("Kernel panic - not syncing", "Kernel panic")
OK = "ok"
MISSING_MARKER = "missing_marker"


def classify(
    scan: MarkerScan | None,
    has_capture: bool,
    lines: list[Line],
    stages: list[Stage],
    rig_error: str | None = None,
) -> str:
    if rig_error:
        return rig_error
    if has_capture and scan is not None and not scan.power_up:
        return "no_power_edge"
    if any(any(p in line.text for p in PANIC_TEXT) for line in lines):
        return "panic"
    missing = next((i for i, s in enumerate(stages) if s.end is None), None)
    if missing is None:
        return OK
    if not lines:
        return "console_lost"
    if any(s.end is not None for s in stages[missing + 1 :]):
        return MISSING_MARKER
    return f"hang_in_{stages[missing].name}"
