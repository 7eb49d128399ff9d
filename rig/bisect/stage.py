"""The time a bisect searches by, taken from one boot's report: a stage of the report
(`kernel`, `power_to_ui`, ...) or one initcall's own duration (`initcall:NAME`), which the
kernel times on its own clock, apart from whatever the boot around it spent."""

from __future__ import annotations

from rig.compare.inputs import Boot
from rig.errors import InputError
from rig.model.report import Report

INITCALL = "initcall:"


def check_stage(stage: str) -> str:
    """`stage` as given, or bad input when it cannot name anything."""
    if not stage.strip():
        raise InputError("--stage: an empty name")
    if stage.startswith(INITCALL) and not stage[len(INITCALL) :].strip():
        raise InputError(f"--stage {stage}: name the initcall, e.g. {INITCALL}ext4_init_fs")
    return stage


def stage_time(report: Report, boot: Boot, stage: str) -> float | str:
    """The boot's seconds for `stage`, or why it has none (the boot then does not count).
    An initcall's time is the sum over its calls (a module's init may run more than one
    initcall of that name); `NAME` matches the initcall or its resolved function."""
    if not stage.startswith(INITCALL):
        return boot.durations.get(stage, f"no {stage}")
    name = stage[len(INITCALL) :]
    if not report.initcalls:
        return "no initcalls on the console (boot with initcall_debug)"
    calls = [c for c in report.initcalls if name in (c.name, c.function)]
    if not calls:
        return f"no initcall {name}"
    if any(not c.returned or c.duration_s is None for c in calls):
        return f"initcall {name} has no duration (it did not return)"
    return sum(float(c.duration_s or 0.0) for c in calls)
