"""A soak's budget verdicts: the percentile budgets of its board and variant
(`rig.config.budgets`) against the soak's own `ok` boots (docs/soak.md, "Budgets")."""

from __future__ import annotations

from pathlib import Path

from rig.config.budgets import beside, read_budgets, read_budgets_if_any
from rig.config.load import RigConfig
from rig.model.budgets import TOTAL_KEY, Budgets
from rig.model.summary import BudgetCheck, SoakBudgets
from rig.names import TOTAL
from rig.soak.stats import finite, percentile


def soak_budgets(cfg: RigConfig, path: Path | None = None) -> Budgets | None:
    """The budgets of the config's board and variant: from `path` (`--budgets`), else
    the file the config names, else budgets.toml next to the config if it names the
    board; None: no budgets to check."""
    stage_names = tuple(s.name for s in cfg.stages)
    if path is not None or cfg.budgets is not None:
        return read_budgets(path or cfg.budgets_file).budgets(cfg.board, cfg.variant, stage_names)
    found = read_budgets_if_any(beside(cfg.path))
    return found.budgets(cfg.board, cfg.variant, stage_names) if found.has(cfg.board) else None


def verdicts(budgets: Budgets, values: dict[str, list[float]]) -> SoakBudgets:
    """Each percentile budget against `values` (seconds per stage and `power_to_ui`, of
    the boots the statistics count)."""
    checks: list[BudgetCheck] = []
    for q, table in budgets.percentiles.items():
        for key, limit in table.items():
            what = TOTAL if key == TOTAL_KEY else key
            got = finite(values.get(what, []))
            value = percentile(got, q)
            ok = value is not None and value <= limit
            checks.append(BudgetCheck(what, q, len(got), value, limit, ok))
    return SoakBudgets(
        file=str(budgets.path),
        board=budgets.board,
        variant=budgets.variant,
        variant_table=budgets.own_variant,
        within=all(c.within for c in checks),
        checks=checks,
    )
