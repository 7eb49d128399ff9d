"""A boot's outcome: one enumeration for analysis, the soak, Robot, InfluxDB and HTML.
The strings are a contract (docs/contract.md, "Outcomes"): extend, never rename.

Every `Outcome` member is its outcome string but `HANG_IN`, whose outcome names the
stage the boot hung in, `hang_in_<stage>` (the stages are the config's, so no members).
`BootOutcome` is one outcome with its class and stage; reports and journals keep the
plain string. How the evidence decides: `rig/analysis/outcome.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    """The class of a boot's outcome; the report's ``outcome`` is its value, except for
    ``hang_in``: ``hang_in_<stage>``.

    | =Value=           | =Evidence= |
    | ok                | the boot reached its UI |
    | hang_in           | the UI was never reached: the stage after the last boundary seen |
    | panic             | the kernel's panic line on the console |
    | missing_marker    | a hook the boot shows it has did not fire, or quiet hides the UI tag |
    | console_lost      | the console ended before the UI tag: its port failed, or no byte came |
    | no_power_edge     | the capture shows no debounced power-up |
    | reset             | the board started again during its boot (watchdog, brown-out) |
    | analyzer_error    | not the board's: the analyzer capture could not be taken |
    | rig_error         | not the board's: the rig itself failed during the cycle |
    | interrupted       | not the board's: Ctrl-C or SIGTERM stopped the run |
    | invalid_artifacts | not the board's: the artifacts contradict themselves |
    """

    OK = "ok"
    HANG_IN = "hang_in"
    PANIC = "panic"
    MISSING_MARKER = "missing_marker"
    CONSOLE_LOST = "console_lost"
    NO_POWER_EDGE = "no_power_edge"
    RESET = "reset"
    ANALYZER_ERROR = "analyzer_error"
    RIG_ERROR = "rig_error"
    INTERRUPTED = "interrupted"
    INVALID_ARTIFACTS = "invalid_artifacts"


#: Outcomes that say how the run or the rig fared, not the board: kept and shown, never
#: counted as the board's failures (soak rates, Robot rates and budgets).
NOT_THE_BOARDS = frozenset(
    {Outcome.INTERRUPTED, Outcome.RIG_ERROR, Outcome.INVALID_ARTIFACTS, Outcome.ANALYZER_ERROR}
)
#: The rig's own verdicts on a cycle, which the cycle and the soak write to run.json
#: (`rig_error`): the rig or an instrument failed, not the board (exit code 3).
RIG_FAILED = (Outcome.RIG_ERROR, Outcome.ANALYZER_ERROR)

HANG_PREFIX = f"{Outcome.HANG_IN}_"


@dataclass(frozen=True)
class BootOutcome:
    """One outcome: its class and, for `hang_in`, the stage. `str()` is the contract
    string (``ok``, ``hang_in_kernel``, ...)."""

    kind: Outcome
    stage: str | None = None

    def __post_init__(self) -> None:
        if (self.kind is Outcome.HANG_IN) != bool(self.stage):
            raise ValueError(f"outcome {self.kind}: a stage goes with hang_in, and only there")

    def __str__(self) -> str:
        return f"{HANG_PREFIX}{self.stage}" if self.kind is Outcome.HANG_IN else self.kind.value

    @classmethod
    def hang_in(cls, stage: str) -> BootOutcome:
        return cls(Outcome.HANG_IN, stage)

    @classmethod
    def parse(cls, text: str) -> BootOutcome:
        """The outcome a contract string names; ValueError for any other string."""
        if text.startswith(HANG_PREFIX) and len(text) > len(HANG_PREFIX):
            return cls.hang_in(text[len(HANG_PREFIX) :])
        try:
            return cls(Outcome(text))
        except ValueError:
            raise ValueError(f"unknown outcome {text!r}: expected one of {NAMES}") from None


#: Every outcome string, for messages: `hang_in` stands for `hang_in_<stage>`.
NAMES = ", ".join(f"{HANG_PREFIX}<stage>" if k is Outcome.HANG_IN else k for k in Outcome)


def is_boards(outcome: str) -> bool:
    """Does `outcome` say something about the board (ok, or one of its failures)? A
    string that names no outcome (a report from elsewhere) is not the rig's: True."""
    return outcome not in NOT_THE_BOARDS
