"""All console parsers over one list of lines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.lines import Line
from rig.analysis.parsers.app import AppEvent, find_app_events
from rig.analysis.parsers.initcall import AsyncWait, InitcallLine, parse_initcalls
from rig.analysis.parsers.kernel import KernelLog, parse_kernel
from rig.analysis.parsers.systemd import SystemdLog, parse_systemd
from rig.analysis.parsers.uboot import UBootLog, parse_uboot
from rig.model.options import AppPattern


@dataclass(frozen=True)
class ConsoleParse:
    uboot: UBootLog
    kernel: KernelLog
    initcalls: tuple[InitcallLine | AsyncWait, ...]
    systemd: SystemdLog
    app_events: tuple[AppEvent, ...]


def parse_console(lines: Sequence[Line], patterns: Sequence[AppPattern] = ()) -> ConsoleParse:
    """`lines` as `split_lines` returns them: record line numbers are list positions."""
    return ConsoleParse(
        parse_uboot(lines),
        parse_kernel(lines),
        tuple(parse_initcalls(lines)),
        parse_systemd(lines),
        tuple(find_app_events(lines, patterns)),
    )
