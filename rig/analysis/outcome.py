"""A boot's outcome, from evidence: the power edge, panic text, the stages reached."""

from __future__ import annotations

from rig.analysis.lines import Line
from rig.analysis.stages import Stage
from rig.model import MarkerScan

PANIC_TEXT = ("Kernel panic - not syncing", "Kernel panic")


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
    missing = next((s for s in stages if s.end is None), None)
    if missing is None:
        return "ok"
    if not lines:
        return "console_lost"
    return f"hang_in_{missing.name}"
