"""The settings the rig turns on the simulated board: arguments appended to the kernel
command line (`[sim] kernel_args`) and U-Boot environment variables (`[sim] uboot_env`),
and how each acts on the boot the profile describes (docs/simulator.md, "Knobs").

Like instrumentation, a knob never touches a stage's budget: the rest steps are
budgeted from the profile as written, so a knob removes exactly the time and console
bytes of what it removes (the truth: simboard.knob_truth).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rig.errors import ConfigError
from simboard.instrumentation import Instrumentation, instrumented
from simboard.steps import (
    Calibrate,
    Cmdline,
    Countdown,
    Initcalls,
    KernelStart,
    Marker,
    RootDelay,
    SimStep,
    Text,
    Verify,
    Wait,
)

#: U-Boot variables the simulated U-Boot reads; any other is kept and has no effect,
#: as on a real U-Boot.
ENV_VARS = ("bootdelay", "verify", "silent", "bootargs")
_ARG = re.compile(r'(?:[^\s"]|"[^"]*"?)+')  # a parameter, as the kernel's next_arg() splits
_LEADING = re.compile(r"\d*")


class SettingError(ConfigError):
    """A setting the simulated board cannot take: `key` names it (`uboot_env.bootdelay`),
    so the rig's config error can name it in its own file (like FaultSpecError)."""

    def __init__(self, key: str, expected: str, found: object) -> None:
        super().__init__(f"key '{key}': expected {expected}, found {found!r}")
        self.key, self.expected, self.found = key, expected, found


@dataclass(frozen=True)
class Settings:
    """What the rig sets: `kernel_args` appended to the command line (after U-Boot's
    `bootargs`, which `uboot_env` may replace), `uboot_env` the variables set."""

    kernel_args: str = ""
    uboot_env: Mapping[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"kernel_args": self.kernel_args, "uboot_env": dict(self.uboot_env)}


def check_env(env: object, where: str = "uboot_env") -> dict[str, str]:
    """U-Boot variables as the rig config or `--uboot-env` gives them: a table of
    strings; `bootdelay` a whole number of seconds 0..99 (a negative one stops
    autoboot: the board would wait at the prompt for ever)."""
    if not isinstance(env, Mapping):
        raise SettingError(where, 'a table of U-Boot variables, e.g. {bootdelay = "0"}', env)
    out: dict[str, str] = {}
    for name, value in env.items():
        key = f"{where}.{name}"
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
            raise SettingError(key, "a U-Boot variable name", name)
        if not isinstance(value, str):
            raise SettingError(key, f'a string (U-Boot variables are text: {name} = "...")', value)
        if not value.isascii() or "\r" in value or "\n" in value:
            raise SettingError(key, "an ASCII string without CR/LF", value)
        if name == "bootdelay" and not (value.isdigit() and int(value) <= 99):
            raise SettingError(key, "a whole number of seconds 0..99", value)
        out[name] = value
    return out


def check_args(args: object, where: str = "kernel_args") -> str:
    if not isinstance(args, str) or not args.isascii() or "\r" in args or "\n" in args:
        raise SettingError(where, "kernel arguments: an ASCII string without CR/LF", args)
    return args.strip()


def _number(value: str | None) -> int:
    """simple_strtoul(): the leading digits, 0 when there are none."""
    digits = _LEADING.match(value or "")
    return int(digits.group(0)) if digits and digits.group(0) else 0


def words(line: str) -> list[str]:
    """The parameters of a command line as the kernel's next_arg() splits it."""
    return _ARG.findall(line)


def params(line: str) -> tuple[tuple[str, str | None], ...]:
    """(name, value) of each parameter in order; value None for a bare flag."""
    out = []
    for word in words(line):
        key, eq, value = word.partition("=")
        out.append((key.strip('"'), value.strip('"') if eq else None))
    return tuple(out)


def _last(params: tuple[tuple[str, str | None], ...], name: str) -> tuple[bool, str | None]:
    hits = [v for k, v in params if k == name]
    return (bool(hits), hits[-1] if hits else None)


@dataclass(frozen=True)
class Board:
    """What the board runs with: its command line and U-Boot's variables, read."""

    cmdline: str
    params: tuple[tuple[str, str | None], ...]  # in order: a later one wins
    ours: tuple[tuple[str, str | None], ...]  # those the rig set (bootargs, kernel_args)
    replaced: bool  # the rig set bootargs: the profile's command line is gone
    bootdelay: int | None  # None: as the profile's countdown step says
    verify: bool
    silent: bool

    @property
    def lpj(self) -> int:  # __setup("lpj="): 0 (or no number) calibrates
        return _number(_last(self.params, "lpj")[1])

    @property
    def rootdelay(self) -> int:
        return _number(_last(self.params, "rootdelay")[1])

    @property
    def blacklist(self) -> frozenset[str]:
        """Every `initcall_blacklist=` adds its comma-separated names (the handler runs
        once per occurrence)."""
        lists = [v or "" for k, v in self.params if k == "initcall_blacklist"]
        return frozenset(n for v in lists for n in v.split(",") if n)

    def instrumentation(self, base: Instrumentation) -> Instrumentation:
        """`quiet` and `initcall_debug[=bool]` set by the rig act like sim.quiet and
        sim.initcall_debug (the profile's own command line is what its steps show
        already); a replaced `bootargs` without initcall_debug turns it off."""
        seen, value = _last(self.ours, "initcall_debug")
        debug = base.initcall_debug
        if seen and (value is None or value in ("1", "y", "Y", "0", "n", "N")):
            debug = value is None or value in ("1", "y", "Y")
        elif debug is None and self.replaced:
            debug = False
        return Instrumentation(base.quiet or _last(self.ours, "quiet")[0], debug)


def board(written: str, settings: Settings, silent_console: bool) -> Board:
    """The board's state: `written` is the profile's command line."""
    env = settings.uboot_env
    bootargs = env.get("bootargs", written)
    line = " ".join(x for x in (bootargs, settings.kernel_args) if x)
    ours = " ".join(x for x in (env.get("bootargs", ""), settings.kernel_args) if x)
    return Board(
        cmdline=line,
        params=params(line),
        ours=params(ours),
        replaced="bootargs" in env,
        bootdelay=int(env["bootdelay"]) if "bootdelay" in env else None,
        # U-Boot 2009.01: verification is off when `verify` starts with 'n'; `silent`
        # counts when set at all, and only where CONFIG_SILENT_CONSOLE is built in.
        verify=not env.get("verify", "").startswith("n"),
        silent=silent_console and "silent" in env,
    )


def _bogomips(lpj: int, hz: int) -> str:
    # calibrate_delay()'s "%lu.%02lu BogoMIPS (lpj=%lu)"
    return f"{lpj // (500000 // hz)}.{(lpj // (5000 // hz)) % 100:02d} BogoMIPS (lpj={lpj})"


def _kernel(step: SimStep, b: Board) -> list[SimStep]:
    if isinstance(step, Cmdline):
        return [Text((f"Kernel command line: {b.cmdline}",), True, True, step.each_s)]
    if isinstance(step, Calibrate):
        result = Text((_bogomips(b.lpj or step.lpj, step.hz),), True)
        if b.lpj:
            skipped = "Calibrating delay loop (skipped) preset value.. "
            return [Text((skipped,), True, newline=False), result]
        return [Text(("Calibrating delay loop... ",), True, False), Wait(step.seconds), result]
    if isinstance(step, RootDelay):
        n = b.rootdelay
        text = f"Waiting {n} sec before mounting root device..."
        return [Text((text,), True), Wait(float(n), scaled=False)] if n else []
    if isinstance(step, Initcalls):
        out: list[SimStep] = []
        for ic in step.calls:
            if ic.fn in b.blacklist:  # do_one_initcall() returns -EPERM before calling it
                out.append(Text((f"initcall {ic.fn} blacklisted",), True))
            elif out and isinstance(out[-1], Initcalls):
                out[-1] = dataclasses.replace(out[-1], calls=(*out[-1].calls, ic))
            else:
                out.append(dataclasses.replace(step, calls=(ic,)))
        return out if b.blacklist else [step]
    return [step]


def _uboot(step: SimStep, b: Board) -> list[SimStep]:
    if isinstance(step, Verify):
        if not b.verify:
            return []
        if b.silent:
            return [Wait(step.seconds)]
        return [Text((step.text,), False, False), Wait(step.seconds), Text((step.ok,), False)]
    if isinstance(step, Countdown):
        n = step.seconds if b.bootdelay is None else b.bootdelay
        if b.silent:  # abortboot() still waits; it prints nothing
            return [Wait(float(n), scaled=False)] if n else []
        return [dataclasses.replace(step, seconds=n)]
    if b.silent and isinstance(step, Text):  # GD_FLG_SILENT: puts() and printf() drop it
        return [Wait(step.each_s * len(step.texts))] if step.each_s else []
    if b.silent and isinstance(step, Marker) and step.tag == "plain":
        return [dataclasses.replace(step, tag="none")]  # the hook's printf is U-Boot's too
    return [step]


def board_steps(
    steps: tuple[SimStep, ...], b: Board, spec: Instrumentation, started: bool
) -> tuple[SimStep, ...]:
    """A stage's steps as the board runs them; `started`: the kernel runs already."""
    out: list[SimStep] = []
    for step in steps:
        if isinstance(step, KernelStart):
            started = True
        out += _kernel(step, b) if started else _uboot(step, b)
    return instrumented(tuple(out), spec)


def stages_as_run(
    stages: Sequence[tuple[SimStep, ...]], b: Board, spec: Instrumentation
) -> list[tuple[SimStep, ...]]:
    """Each stage's steps (in profile order) as the board `b` runs them."""
    out, started = [], False
    for steps in stages:
        out.append(board_steps(steps, b, spec, started))
        started = started or any(isinstance(s, KernelStart) for s in steps)
    return out
