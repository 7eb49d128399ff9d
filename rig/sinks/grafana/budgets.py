"""Per-board time budgets for the dashboards' budget lines.

The one place the dashboards read `config/budgets.toml` (shared with the Robot budget
suites): `[boards.<name>] power_to_ui_s = ...` and `[boards.<name>.stages] <stage> = ...`.
Keys this module does not use are ignored, since the file belongs to the budget suites.
Without the file, the defaults below apply.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rig.errors import ConfigError


@dataclass(frozen=True)
class Budget:
    power_to_ui_s: float | None
    stages: dict[str, float] = field(default_factory=dict)


#: Used only when config/budgets.toml does not exist: the shipped board profiles.
DEFAULT_BUDGETS = {
    "ecovec": Budget(1.0),  # the ELC-E 2010 optimised boot (0.77 s) with headroom
    "fastboard": Budget(0.4),  # the simulator's 0.3 s test board
}


class BudgetError(ConfigError):
    """budgets.toml exists but is not what the dashboards expect."""


def _seconds(path: Path, key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise BudgetError(f"{path}: key '{key}': expected seconds > 0, found {value!r}")
    return float(value)


def load_budgets(path: Path) -> dict[str, Budget]:
    """Budgets by board name, sorted; DEFAULT_BUDGETS when `path` does not exist."""
    if not path.exists():
        return dict(sorted(DEFAULT_BUDGETS.items()))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise BudgetError(f"{path}: {e}") from None
    boards = data.get("boards", {})
    if not isinstance(boards, dict):
        raise BudgetError(f"{path}: key 'boards': expected a table")
    out: dict[str, Budget] = {}
    for name, table in sorted(boards.items()):
        if not isinstance(table, dict):
            raise BudgetError(f"{path}: key 'boards.{name}': expected a table")
        total = table.get("power_to_ui_s")
        stages = table.get("stages", {})
        if not isinstance(stages, dict):
            raise BudgetError(f"{path}: key 'boards.{name}.stages': expected a table")
        out[name] = Budget(
            _seconds(path, f"boards.{name}.power_to_ui_s", total) if total is not None else None,
            {s: _seconds(path, f"boards.{name}.stages.{s}", v) for s, v in stages.items()},
        )
    return out
