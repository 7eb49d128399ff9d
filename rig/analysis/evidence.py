"""The evidence behind the outcomes the console decides, each defined once: the kernel's
panic line (the cycle watches for it live; the classifier and the kernel parser read
it) and a lost console (`console_lost`: it ended before the UI's tag, docs/artifacts.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rig.model import Run

PANIC_TEXT = "Kernel panic - not syncing"
PANIC_BYTES = PANIC_TEXT.encode()
_PANIC_RE = re.compile(re.escape(PANIC_TEXT) + r":?\s*(.*)$")


def panic_reason(text: str) -> str | None:
    """The reason on the kernel's panic line (may be empty); None for any other line."""
    m = _PANIC_RE.search(text) if PANIC_TEXT in text else None
    return m.group(1).strip() if m else None


@dataclass(frozen=True)
class ConsoleRecord:
    """What the cycle recorded of its console, beyond the bytes themselves."""

    recorded: bool = True  # the run has a console (console.jsonl)
    port_error: str | None = None  # run.json `console_error`: the port failed mid-run
    ui_tag_seen: bool = False  # the cycle saw the UI's tag (or its stand-in) arrive

    @classmethod
    def of_run(cls, run: Run, recorded: bool) -> ConsoleRecord:
        seen = run.timing is not None and run.timing.ui_ready_seen_ns is not None
        return cls(recorded, run.console_error, seen)

    def lost(self, lines: int) -> bool:
        """The console ended before the UI's tag (`lines`: console lines read)."""
        failed = self.port_error is not None and not self.ui_tag_seen
        return failed or (self.recorded and lines == 0)

    def note(self) -> str | None:
        """The port's failure as a caveat for the report, when there was one."""
        if self.port_error is None:
            return None
        when = "after" if self.ui_tag_seen else "before"
        return f"console port failed {when} the UI's tag: {self.port_error}"
