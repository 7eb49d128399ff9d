"""`config/budgets.toml` -> `rig.model.budgets.BudgetFile` (schema: docs/robot.md), for
Robot, `rig soak` and `rig grafana build`. The whole file is checked when read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig.config.tomlcheck import Table, load_toml
from rig.errors import ConfigError
from rig.model.budgets import NO_BUDGETS, TOTAL_KEY, BoardBudgets, BudgetFile, BudgetTable

SCHEMA = "bootrig.budgets/1"
#: The file the tools read when given none: `rig grafana build` from the repository,
#: Robot and `rig soak` next to the rig config (`beside`).
DEFAULT_PATH = Path("config/budgets.toml")
FILE_NAME = "budgets.toml"


def _positive(t: Table, key: str, unit: str) -> float:
    v = t.float(key, min=0.0)
    if v <= 0:
        t.error(key, f"{unit} > 0", v)
    return float(v)


def _per_stage(t: Table, unit: str = "seconds", total_ok: bool = False) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in list(t.data):
        if key == TOTAL_KEY and not total_ok:
            t.fail(key, "not a stage")
        out[key] = _positive(t, key, unit)
    t.done()
    return out


def _percentiles(t: Table) -> tuple[dict[float, dict[str, float]], dict[float, str]]:
    out: dict[float, dict[str, float]] = {}
    keys: dict[float, str] = {}
    for key in list(t.data):
        try:
            q = float(key)
        except ValueError:
            q = -1.0
        if not 0 < q < 100:
            t.fail(key, "expected a percentile 0 < q < 100")
        if q in keys:
            t.fail(key, f"the same percentile as '{t.key(keys[q])}'")
        keys[q] = key
        out[q] = _per_stage(t.table(key), total_ok=True)
    t.done()
    return dict(sorted(out.items())), keys


def _budget_table(t: Table) -> BudgetTable:
    total = _positive(t, TOTAL_KEY, "seconds") if t.has(TOTAL_KEY) else None
    pct, keys = _percentiles(t.table("percentiles"))
    return BudgetTable(
        key=t.where,
        power_to_ui_s=total,
        stages=_per_stage(t.table("stages")),
        percentiles=pct,
        energy=_per_stage(t.table("energy"), "joules"),
        percentile_keys=keys,
    )


def _board(name: str, t: Table) -> BoardBudgets:
    vt = t.table("variants")
    variants: dict[str, BudgetTable] = {}
    for v in list(vt.data):
        table = vt.table(v)
        variants[v] = _budget_table(table)
        table.done()  # a variant's own `variants` is an unknown key too
    vt.done()
    own = _budget_table(t)
    t.done()
    return BoardBudgets(name, own, variants)


def parse_budgets(path: Path, data: dict[str, Any]) -> BudgetFile:
    """The budgets in `data`, the TOML of `path` (named in every error)."""
    root = Table(path, data)
    schema = root.str("schema", SCHEMA)
    if schema != SCHEMA:
        root.error("schema", repr(SCHEMA), schema)
    boards = root.table("boards")
    root.done()
    return BudgetFile(path, {b: _board(b, boards.table(b)) for b in list(boards.data)})


def read_budgets(path: Path) -> BudgetFile:
    """The budgets file at `path`; a missing file is an error (one the user named)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such budgets file")
    return parse_budgets(path, load_toml(path))


def read_budgets_if_any(path: Path) -> BudgetFile:
    """`read_budgets`, but no file means `NO_BUDGETS` (for the default path)."""
    return read_budgets(path) if Path(path).exists() else NO_BUDGETS


def beside(config_path: Path) -> Path:
    """The budgets file next to a rig config: what Robot and `rig soak` read by default."""
    return Path(config_path).parent / FILE_NAME
