"""Per-boot fault rates: which fault (if any) each power-on injects, drawn from a seed.

`rig sim serve --faults JSON` (and `[sim.faults]` in a rig config) sets rates; at every
power-on the board draws at most one fault for that boot from its own seeded stream,
so boot k of a simulator started with `--seed N` always gets the same fault. The
validation lives here, without numpy: rig.config.load imports it for a `[sim.faults]` table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from rig.errors import ConfigError
from rig.names import MARKERS
from simboard.profile import STAGES

#: Stages where a 2.6.31 kernel can panic (simboard.timeline.PANICS has the texts).
PANIC_STAGES = STAGES[1:]
#: A missing marker that still has a later boundary after it (the boot visibly goes on).
MISSING_MARKERS = MARKERS[:-1]
#: Rates in the order the draw uses them (a boot gets the first whose band holds u); a
#: key added later goes last, so that a seed draws the faults it drew before.
RATE_KEYS = ("hang", "panic", "console_lost", "missing_marker", "garbage", "analyzer", "brownout")
LIST_KEYS: dict[str, tuple[str, ...]] = {
    "hang_stages": STAGES,
    "brownout_stages": STAGES,
    "panic_stages": PANIC_STAGES,
    "missing_markers": MISSING_MARKERS,
}
#: Seed stream id of the fault draw (simboard.board uses 2 and 3, the timeline 1).
FAULT_STREAM = 4
#: Where a pty is closed, as a fraction of the boot's console time: never at the very
#: start (nothing to lose) nor after the last byte (nothing lost).
CLOSE_AT = (0.1, 0.9)


class FaultSpecError(ConfigError):
    """A bad key in a fault-rate table: `key`, what was `expected`, what was `found`."""

    def __init__(self, key: str, expected: str, found: object) -> None:
        super().__init__(f"key '{key}': expected {expected}, found {found!r}")
        self.key, self.expected, self.found = key, expected, found


@dataclass(frozen=True)
class FaultRates:
    hang: float = 0.0
    hang_stages: tuple[str, ...] = STAGES
    panic: float = 0.0
    panic_stages: tuple[str, ...] = PANIC_STAGES
    console_lost: float = 0.0  # the console pty is closed mid-boot (adapter lost)
    missing_marker: float = 0.0
    missing_markers: tuple[str, ...] = MISSING_MARKERS
    garbage: float = 0.0  # line noise before one console line
    analyzer: float = 0.0  # the capture cannot be stopped and read out
    brownout: float = 0.0  # the rail drops mid-boot and comes back: the board boots again
    brownout_stages: tuple[str, ...] = STAGES

    @property
    def total(self) -> float:
        return sum(getattr(self, k) for k in RATE_KEYS)

    def as_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> FaultRates:
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ValueError(f"not JSON: {e}") from None
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, found {data!r}")
        return parse_rates(data)


def parse_rates(data: Mapping[str, Any]) -> FaultRates:
    """Validate a rate table; raises FaultSpecError naming the key."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in RATE_KEYS:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not 0.0 <= value <= 1.0:
                raise FaultSpecError(key, "a rate between 0 and 1", value)
            out[key] = float(value)
        elif key in LIST_KEYS:
            choices = LIST_KEYS[key]
            if (
                not isinstance(value, list | tuple)
                or not value
                or not all(isinstance(v, str) and v in choices for v in value)
            ):
                raise FaultSpecError(key, "a non-empty array of " + ", ".join(choices), value)
            out[key] = tuple(dict.fromkeys(value))
        else:
            known = ", ".join((*RATE_KEYS, *LIST_KEYS))
            raise FaultSpecError(key, f"one of the known keys ({known})", key)
    rates = FaultRates(**out)
    if rates.total > 1.0 + 1e-12:
        raise FaultSpecError(
            "", "rates that add up to at most 1 (one fault per boot at most)", rates.total
        )
    return rates


def draw(rates: FaultRates, seed: int | None, boot: int, lines: int) -> str | None:
    """The fault of boot `boot` as `--fault` text (simboard.timeline.Fault.parse), or None.

    `lines` is the profile's console line count: garbage precedes one of those lines.
    """
    import numpy as np  # the simulator only; rig.config.load must not pay for numpy

    rng = np.random.default_rng([seed, boot, FAULT_STREAM] if seed is not None else None)
    u = float(rng.random())
    for key in RATE_KEYS:
        rate = getattr(rates, key)
        if u >= rate:
            u -= rate
            continue
        if key == "hang":
            return f"hang:{rates.hang_stages[int(rng.integers(len(rates.hang_stages)))]}"
        if key == "panic":
            return f"panic:{rates.panic_stages[int(rng.integers(len(rates.panic_stages)))]}"
        if key == "console_lost":
            return f"console-closed:{float(rng.uniform(*CLOSE_AT)):.4f}"
        if key == "missing_marker":
            names = rates.missing_markers
            return f"missing-marker:{names[int(rng.integers(len(names)))]}"
        if key == "garbage":
            return f"garbage:{int(rng.integers(max(1, lines)))}"
        if key == "brownout":
            stages = rates.brownout_stages
            return f"brownout:{stages[int(rng.integers(len(stages)))]}"
        return "analyzer"
    return None
