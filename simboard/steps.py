"""The steps of a boot stage in a board profile: what they mean and how they parse.

A step is an inline table with exactly one kind key (`line`, `printk`, `wait_s`, ...);
simboard.timeline runs them, docs/simulator.md documents them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rig.config.tomlcheck import Table
from rig.errors import ConfigError
from rig.names import MARKERS

TAGS = ("auto", "plain", "printk", "none")
STEP_KINDS = (
    "line",
    "printk",
    "wait_s",
    "rest",
    "kernel_start",
    "marker",
    "initcalls",
    "countdown",
    "verify",
    "calibrate",
    "cmdline",
    "rootdelay",
)
_SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


@dataclass(frozen=True)
class Text:
    """Console text: plain (`line`) or printk-prefixed (`printk`)."""

    texts: tuple[str, ...]
    printk: bool
    newline: bool = True
    each_s: float = 0.0  # CPU time after each line (scaled by the stage variance)


@dataclass(frozen=True)
class Wait:
    seconds: float
    scaled: bool = True  # False: a timer (countdown, ssleep), not scaled by the variance


@dataclass(frozen=True)
class Rest:
    """Takes whatever is left of the stage's nominal duration."""


@dataclass(frozen=True)
class KernelStart:
    """The kernel's entry point: its printk clock starts here."""


@dataclass(frozen=True)
class Marker:
    name: str
    tag: str  # "plain" | "printk" | "none" ("auto" resolved on load)
    hook_s: float  # from the GPIO write to the tag print


@dataclass(frozen=True)
class Initcall:
    fn: str
    size: int
    us: float
    ret: int = 0


@dataclass(frozen=True)
class Initcalls:
    calls: tuple[Initcall, ...]
    debug: bool = True  # initcall_debug on the kernel command line
    pid: int = 1


@dataclass(frozen=True)
class Countdown:
    """U-Boot's autoboot countdown: `bootdelay` ticks of one second each."""

    seconds: int
    prompt: str


@dataclass(frozen=True)
class Verify:
    """U-Boot's image check: `text`, `seconds` of CRC, then `ok`; gone with verify=no."""

    seconds: float
    text: str
    ok: str


@dataclass(frozen=True)
class Calibrate:
    """2.6-era calibrate_delay(): the loop takes `seconds` and finds `lpj` (at `hz`);
    a preset `lpj=` on the command line skips it."""

    seconds: float
    lpj: int
    hz: int


@dataclass(frozen=True)
class Cmdline:
    """The printk `Kernel command line: ...`; `args` is the profile's command line, to
    which the rig's kernel_args are appended (simboard.knobs)."""

    args: str
    each_s: float = 0.0


@dataclass(frozen=True)
class RootDelay:
    """Where prepare_namespace() sleeps `rootdelay=` seconds (nothing without it)."""


# One parsed step of a profile stage; simboard.knobs turns the knob-driven kinds
# (Verify, Calibrate, Cmdline, RootDelay) into the others, which the timeline runs.
SimStep = (
    Text | Wait | Rest | KernelStart | Marker | Initcalls | Countdown | Verify | Calibrate
    | Cmdline | RootDelay
)  # fmt: skip
#: Step kinds of the kernel (after the kernel_start step only).
_KERNEL_KINDS = ("printk", "initcalls", "calibrate", "cmdline", "rootdelay")


def _texts(t: Table, key: str) -> tuple[str, ...]:
    v = t.raw(key)
    items = [v] if isinstance(v, str) else v
    ok = isinstance(items, list) and items and all(isinstance(x, str) for x in items)
    if not ok or not all(x.isascii() and "\r" not in x and "\n" not in x for x in items):
        t.error(key, "an ASCII string or a non-empty array of them, without CR/LF", v)
    return tuple(items)


def _initcall(t: Table) -> Initcall:
    fn = t.str("fn")
    if not _SYMBOL.match(fn):
        t.error("fn", "a C symbol name", fn)
    ic = Initcall(fn=fn, size=t.int("size", min=1), us=t.float("us", min=0.0), ret=t.int("ret", 0))
    t.done()
    return ic


def parse_step(t: Table, kernel_started: bool) -> SimStep:
    kinds = [k for k in STEP_KINDS if t.has(k)]
    if len(kinds) != 1:
        raise ConfigError(
            f"{t.path}: key '{t.where}': expected exactly one step kind of "
            f"{', '.join(STEP_KINDS)}, found {kinds or sorted(t.data)}"
        )
    kind = kinds[0]
    if kind in _KERNEL_KINDS and not kernel_started:
        t.error(kind, f"{kind} only after the kernel_start step", t.data[kind])
    step: SimStep
    if kind in ("line", "printk"):
        step = Text(
            texts=_texts(t, kind),
            printk=kind == "printk",
            newline=t.bool("newline", True),
            each_s=t.float("each_s", 0.0, min=0.0),
        )
    elif kind == "wait_s":
        step = Wait(t.float("wait_s", min=0.0))
    elif kind == "rest":
        if t.raw("rest") is not True:
            t.error("rest", "true", t.data["rest"])
        step = Rest()
    elif kind == "kernel_start":
        if t.raw("kernel_start") is not True:
            t.error("kernel_start", "true", t.data["kernel_start"])
        step = KernelStart()
    elif kind == "marker":
        name = t.str("marker", choices=MARKERS)
        tag = t.str("tag", "auto", choices=TAGS)
        if tag == "auto":
            tag = "printk" if kernel_started else "plain"
        if tag == "printk" and not kernel_started:
            t.error("tag", "'plain' or 'none' before the kernel_start step", tag)
        step = Marker(name=name, tag=tag, hook_s=t.float("hook_us", 4.0, min=0.0) * 1e-6)
    elif kind == "initcalls":
        calls = tuple(_initcall(c) for c in t.tables("initcalls"))
        if not calls:
            t.error("initcalls", "a non-empty array of {fn, size, us} tables", [])
        step = Initcalls(calls=calls, debug=t.bool("debug", True), pid=t.int("pid", 1, min=0))
    elif kind in ("verify", "calibrate", "cmdline", "rootdelay"):
        step = _knob_step(t, kind, kernel_started)
    else:
        n = t.int("countdown", min=0)
        if n > 99:
            t.error("countdown", "a bootdelay of 0..99 s", n)
        prompt = t.str("prompt", "Hit any key to stop autoboot: ")
        step = Countdown(seconds=n, prompt=prompt)
    t.done()
    return step


def _knob_step(t: Table, kind: str, kernel_started: bool) -> SimStep:
    """The steps a knob acts on (docs/simulator.md, "Knobs")."""
    if kind == "verify":
        if kernel_started:
            t.error("verify", "verify (U-Boot's) only before the kernel_start step", t.data[kind])
        text = t.str("text", "   Verifying Checksum ... ")
        ok = t.str("ok", "OK")
        for key, v in (("text", text), ("ok", ok)):
            if not v.isascii() or "\r" in v or "\n" in v:
                t.error(key, "an ASCII string without CR/LF", v)
        return Verify(t.float("verify", min=0.0), text, ok)
    if kind == "calibrate":
        # HZ as the kernel is configured (100, 250, 300, 1000): the BogoMIPS divide by it
        hz = t.int("hz", 100, min=10, max=1000)
        return Calibrate(t.float("calibrate", min=0.0), t.int("lpj", min=1), hz)
    if kind == "cmdline":
        args = t.str("cmdline")
        if not args.isascii() or "\r" in args or "\n" in args:
            t.error("cmdline", "an ASCII string without CR/LF", args)
        return Cmdline(args, t.float("each_s", 0.0, min=0.0))
    if t.raw("rootdelay") is not True:
        t.error("rootdelay", "true", t.data["rootdelay"])
    return RootDelay()
