"""Instrumentation on the simulated board's kernel command line (`[instrumentation]`):
`quiet` and `initcall_debug`, the observer's cost of Murray's uncertainty principle.

The profile as written fixes every stage's budget: its rest step takes what is left of
`duration_s` after the steps and console time *as written*. A variant then switches
instrumentation on or off without touching that budget, so it adds or removes exactly
the console time of the lines it adds or removes: the true cost, known to the bit time
(`rig sim timeline --json` shows it as `planned_s`, `truth.json` per stage too).

- `quiet = true`: the kernel's printk lines stay off the console (console_loglevel 4: a
  2.6.31 printk without a level is KERN_WARNING and not shown), initcall_debug's lines
  with them; what the CPU does between them (`each_s`) still takes its time. Plain
  lines (U-Boot, init scripts, the application) are not printk and still print. The
  bootrig hooks' tags stay: the simulated hooks print them at a level `quiet` lets
  through (the real kernel hook uses pr_notice, which `quiet` hides; see docs/cost.md).
- `initcall_debug = true|false`: the `calling`/`returned` lines of every initcalls step
  on or off (unset: as each step's `debug` says).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from rig.config.tomlcheck import Table
from simboard.steps import Initcalls, SimStep, Text, Wait


@dataclass(frozen=True)
class Instrumentation:
    quiet: bool = False
    initcall_debug: bool | None = None  # None: as each initcalls step says

    @property
    def as_written(self) -> bool:
        return not self.quiet and self.initcall_debug is None

    def as_dict(self) -> dict[str, Any]:
        return {"quiet": self.quiet, "initcall_debug": self.initcall_debug}


def parse(t: Table) -> Instrumentation:
    """`[instrumentation]` of a board profile (every key optional)."""
    debug = t.raw("initcall_debug", None)
    if debug is not None and not isinstance(debug, bool):
        t.error("initcall_debug", "true or false", debug)
    spec = Instrumentation(quiet=t.bool("quiet", False), initcall_debug=debug)
    t.done()
    return spec


def switch(value: str | None, key: str) -> bool | None:
    """`rig sim serve --quiet on|off` (None: as the profile says)."""
    if value is None:
        return None
    if value not in ("on", "off"):
        raise ValueError(f"{key}: expected on or off, found {value!r}")
    return value == "on"


def _step(step: SimStep, spec: Instrumentation) -> SimStep:
    if isinstance(step, Text) and step.printk and spec.quiet:
        # The lines stay in the kernel's log buffer; the CPU work between them remains.
        return Wait(step.each_s * len(step.texts))
    if isinstance(step, Initcalls):
        debug = step.debug if spec.initcall_debug is None else spec.initcall_debug
        return dataclasses.replace(step, debug=debug and not spec.quiet)
    return step


def instrumented(steps: tuple[SimStep, ...], spec: Instrumentation) -> tuple[SimStep, ...]:
    """A stage's steps as the board runs them with `spec` on its command line."""
    if spec.as_written:
        return steps
    return tuple(_step(step, spec) for step in steps)
