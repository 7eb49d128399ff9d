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


# One parsed step of a profile stage, as the timeline runs it.
SimStep = Text | Wait | Rest | KernelStart | Marker | Initcalls | Countdown


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
    step: SimStep
    if kind in ("line", "printk"):
        if kind == "printk" and not kernel_started:
            t.error(kind, "printk only after the kernel_start step", t.data[kind])
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
        if not kernel_started:
            t.error("initcalls", "initcalls only after the kernel_start step", "initcalls")
        calls = tuple(_initcall(c) for c in t.tables("initcalls"))
        if not calls:
            t.error("initcalls", "a non-empty array of {fn, size, us} tables", [])
        step = Initcalls(calls=calls, debug=t.bool("debug", True), pid=t.int("pid", 1, min=0))
    else:
        n = t.int("countdown", min=0)
        if n > 99:
            t.error("countdown", "a bootdelay of 0..99 s", n)
        prompt = t.str("prompt", "Hit any key to stop autoboot: ")
        step = Countdown(seconds=n, prompt=prompt)
    t.done()
    return step
