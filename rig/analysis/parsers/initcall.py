"""`initcall_debug` lines, as printed by init/main.c and kernel/async.c.

    calling  sh_mobile_lcdc_init+0x0/0x1c @ 1
    initcall sh_mobile_lcdc_init+0x0/0x1c returned 0 after 148437 usecs
    calling  foo_init+0x0/0x1000 [foo] @ 123                 (a module's init)
    calling  1_sd_probe_async+0x0/0x1c8 @ 745                (async: cookie_function)
    initcall 1_do_populate_rootfs+0x0/0x1bc returned after 3012 usecs   (async, 6.x)
    async_waiting @ 1
    async_continuing @ 1 after 1220 usec

Kernels before 6.4 compute "usecs" as ns >> 10 (2.3 % low); the number is kept as
printed, it is the kernel's own measure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rig.analysis.lines import Line
from rig.analysis.parsers.text import clean

# An unresolved symbol prints as an address; async entries get "<cookie>_" in front.
_SYM = (
    r"(?:(?P<cookie>\d+)_)?(?P<name>[A-Za-z_.$][\w.$]*|0x[0-9a-fA-F]+)"
    r"(?:\+0x[0-9a-fA-F]+/0x[0-9a-fA-F]+)?(?: \[(?P<module>[\w-]+)\])?"
)
_CALL = re.compile(rf"^calling  {_SYM} @ (?P<pid>\d+)")
_RETURN = re.compile(rf"^initcall {_SYM} returned(?: (?P<ret>-?\d+))? after (?P<us>\d+) usecs")
_WAITING = re.compile(r"^async_waiting @ (\d+)")
_CONTINUING = re.compile(r"^async_continuing @ (\d+) after (\d+) usec")
# Since 5.17 initcalls may be wrapped in stubs named after the object, counter and line:
# __initstub__kmod_clk_imx8mm__270_638_imx8mm_clk_driver_init6 (level 6).
_STUB = re.compile(r"^__initstub__kmod_\w+?__\d+_\d+_(\w+?)(?:early|rootfs|[0-7]s?)$")


@dataclass(frozen=True)
class InitcallLine:
    line: int
    call: bool  # True for "calling", False for "initcall ... returned"
    name: str  # the symbol as printed
    module: str | None  # "[foo]" suffix: the init of a loadable module
    cookie: int | None  # async entries
    pid: int | None  # "@ pid" of a calling line
    ret: int | None  # return code (async returns print none)
    usecs: int | None  # "after M usecs" of a return line

    @property
    def function(self) -> str:
        """The function behind an __initstub__ wrapper, else the name itself."""
        m = _STUB.match(self.name)
        return m.group(1) if m else self.name


@dataclass(frozen=True)
class AsyncWait:
    line: int
    pid: int
    waiting: bool  # True: async_waiting; False: async_continuing (with usecs)
    usecs: int | None


def _parse(i: int, t: str) -> InitcallLine | AsyncWait | None:
    if t.startswith("calling  ") and (m := _CALL.match(t)):
        cookie = int(m.group("cookie")) if m.group("cookie") else None
        name, module, pid = m.group("name"), m.group("module"), int(m.group("pid"))
        return InitcallLine(i, True, name, module, cookie, pid, None, None)
    if t.startswith("initcall ") and (m := _RETURN.match(t)):
        cookie = int(m.group("cookie")) if m.group("cookie") else None
        ret = int(m.group("ret")) if m.group("ret") is not None else None
        name, module, us = m.group("name"), m.group("module"), int(m.group("us"))
        return InitcallLine(i, False, name, module, cookie, None, ret, us)
    if t.startswith("async_"):
        if m := _WAITING.match(t):
            return AsyncWait(i, int(m.group(1)), True, None)
        if m := _CONTINUING.match(t):
            return AsyncWait(i, int(m.group(1)), False, int(m.group(2)))
    return None


def parse_initcalls(lines: Sequence[Line]) -> list[InitcallLine | AsyncWait]:
    out: list[InitcallLine | AsyncWait] = []
    for i, ln in enumerate(lines):
        rec = _parse(i, clean(ln))
        if rec is not None:
            out.append(rec)
    return out
