"""systemd on the console: status lines, "Startup finished", targets reached.

[  OK  ] Started Journal Service.
[  OK  ] Started systemd-journald.service - Journal Service.     (v250+)
         Starting Load Kernel Modules...
[FAILED] Failed to start Network Time Synchronization.
systemd[1]: Startup finished in 1.2s (kernel) + 2.3s (initrd) + 5.6s (userspace) = 9.1s.
systemd[1]: graphical.target reached after 5.123s in userspace.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.lines import Line
from rig.analysis.parsers.text import clean
from rig.model.sections import TargetTime

# format_timespan() units, longest first so "min" and "ms" are not read as "m"/"s".
_UNITS = {
    "y": 31557600.0,
    "month": 2629800.0,
    "w": 604800.0,
    "d": 86400.0,
    "h": 3600.0,
    "min": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
}
_UNIT_RE = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
_PIECE = re.compile(rf"(\d+(?:\.\d+)?)({_UNIT_RE})(?![A-Za-z])")
_AMOUNT = rf"\d+(?:\.\d+)?(?:{_UNIT_RE})"
_SPAN = rf"{_AMOUNT}(?: {_AMOUNT})*"
_LABELLED = rf"{_SPAN}(?: \(\w+\))?"
_STARTUP = re.compile(rf"Startup finished in ({_LABELLED}(?: \+ {_LABELLED})*)(?: = ({_SPAN}))?")
_PART = re.compile(rf"({_SPAN})(?: \((\w+)\))?")
_TARGET = re.compile(rf"(\S+\.target) reached after ({_SPAN}) in userspace")
_STATUS = re.compile(r"^\[\s*(OK|FAILED|DEPEND|TIME|WARN|INFO)\s*\] (.*)$")
_VERBS = (
    "Reached target",
    "Failed to start",
    "Started",
    "Finished",
    "Mounted",
    "Listening on",
    "Created slice",
    "Set up automount",
    "Stopped",
    "Starting",
    "Mounting",
)
_PREFIX = re.compile(r"^systemd\[\d+\]: ")
# "foo.service - Foo Service" (v250+): the unit id, then its description.
_UNIT_ID = re.compile(
    r"^(\S+\.(?:service|mount|socket|target|slice|device|path|timer|swap|scope))"
    r" - (.*)$"
)


@dataclass(frozen=True)
class StartupFinished:
    line: int
    parts: tuple[tuple[str, float], ...]  # ("kernel", 1.234), ...; label "" if unnamed
    total_s: float | None
    scope: str  # "system" (PID 1) or "user" (a user manager: one unnamed part)


@dataclass(frozen=True)
class UnitStatus:
    line: int
    status: str  # OK, FAILED, ... or "" for the unmarked forms ("Starting Foo...")
    verb: str  # Started, Starting, Reached target, Failed to start, ...
    unit: str  # the description as printed ("Journal Service")
    unit_id: str | None  # "systemd-journald.service" when systemd prints it


@dataclass(frozen=True)
class SystemdLog:
    startup: StartupFinished | None
    targets: tuple[TargetTime, ...]
    units: tuple[UnitStatus, ...]


def timespan_s(text: str) -> float:
    """A systemd timespan ("1min 2.345s", "345ms", "1h 2min") in seconds."""
    return sum(float(n) * _UNITS[u] for n, u in _PIECE.findall(text))


def _startup(i: int, t: str, m: re.Match[str]) -> StartupFinished:
    parts = tuple(
        (label or "", timespan_s(span)) for span, label in _PART.findall(m.group(1)) if span
    )
    total = timespan_s(m.group(2)) if m.group(2) else None
    pid = re.search(r"systemd\[(\d+)\]", t)
    user = (pid is not None and pid.group(1) != "1") or all(not p[0] for p in parts)
    if total is None and len(parts) == 1:
        total = parts[0][1]
    return StartupFinished(i, parts, total, "user" if user else "system")


def _unit(i: int, t: str) -> UnitStatus | None:
    """Three forms: "[  OK  ] Verb unit.", "systemd[1]: Verb unit." (its kmsg copy) and
    the indented, unmarked "         Starting unit..." (not sysvinit's "Starting foo:")."""
    status = ""
    if t.startswith("["):
        m = _STATUS.match(t)
        if m is None:
            return None
        status, rest = m.group(1), m.group(2)
    elif t.startswith("systemd["):
        rest = _PREFIX.sub("", t, count=1)
    elif t.startswith("   ") and t.rstrip().endswith("..."):
        rest = t.strip()
    else:
        return None
    for verb in _VERBS:
        if rest.startswith(verb + " "):
            desc = rest[len(verb) + 1 :].rstrip()
            desc = desc.removesuffix("...") if verb in ("Starting", "Mounting") else desc
            desc = desc.removesuffix(".")
            if m := _UNIT_ID.match(desc):
                return UnitStatus(i, status, verb, m.group(2), m.group(1))
            return UnitStatus(i, status, verb, desc, None)
    return None


def parse_systemd(lines: Sequence[Line]) -> SystemdLog:
    startup: StartupFinished | None = None
    targets: list[TargetTime] = []
    units: list[UnitStatus] = []
    for i, ln in enumerate(lines):
        t = clean(ln)
        if "Startup finished in" in t and (m := _STARTUP.search(t)):
            found = _startup(i, t, m)
            if startup is None or (startup.scope == "user" and found.scope == "system"):
                startup = found
        elif "reached after" in t and (m := _TARGET.search(t)):
            targets.append(TargetTime(i, m.group(1), timespan_s(m.group(2))))
        elif u := _unit(i, t):
            units.append(u)
    return SystemdLog(startup, tuple(targets), tuple(units))
