"""Time and energy budgets per board and variant: `config/budgets.toml` as parsed
(`BudgetFile`, by `rig.config.budgets`) and the budgets of one board and variant (`Budgets`),
which Robot's budget keywords, `rig soak` and the Grafana dashboards all read. A variant's
table changes the board's key by key and never removes a budget (the rule: docs/robot.md,
"Board and variant").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rig.errors import ConfigError
from rig.names import TOTAL

#: The key of the power-to-UI budget, in a board's table and in a percentile's.
TOTAL_KEY = f"{TOTAL}_s"


@dataclass(frozen=True)
class BudgetTable:
    """One `[boards.<b>]` or `[boards.<b>.variants.<v>]` table, as written: seconds
    (energy: joules), every value > 0. `key` is where it is in the file, for errors."""

    key: str
    power_to_ui_s: float | None = None
    stages: Mapping[str, float] = field(default_factory=dict)
    percentiles: Mapping[float, Mapping[str, float]] = field(default_factory=dict)
    energy: Mapping[str, float] = field(default_factory=dict)
    #: Each percentile's key as the file spells it ("95", "99.9"), for errors.
    percentile_keys: Mapping[float, str] = field(default_factory=dict)

    def stage_keys(self) -> Iterator[tuple[str, str]]:
        """(key in the file, stage name) of every budget given per stage."""
        for name in self.stages:
            yield f"{self.key}.stages.{name}", name
        for q, table in self.percentiles.items():
            for name in table:
                if name != TOTAL_KEY:
                    yield f"{self.key}.percentiles.{self.percentile_keys[q]}.{name}", name
        for name in self.energy:
            yield f"{self.key}.energy.{name}", name


@dataclass(frozen=True)
class BoardBudgets:
    name: str
    table: BudgetTable
    variants: Mapping[str, BudgetTable] = field(default_factory=dict)


@dataclass(frozen=True)
class Budgets:
    """The budgets of one board and variant, the variant's table applied."""

    path: Path
    board: str
    variant: str | None
    #: True when the file has a table for this variant (it changed the board's budgets).
    own_variant: bool = False
    power_to_ui_s: float | None = None
    stages: Mapping[str, float] = field(default_factory=dict)
    percentiles: Mapping[float, Mapping[str, float]] = field(default_factory=dict)
    energy: Mapping[str, float] = field(default_factory=dict)  # stage -> joules

    def where(self) -> str:
        """The file and the tables these budgets come from."""
        own = f" and [boards.{self.board}.variants.{self.variant}]" if self.own_variant else ""
        return f"{self.path} [boards.{self.board}]{own}"

    def percentile(self, q: float) -> Mapping[str, float]:
        return self.percentiles.get(float(q), {})


def _apply(b: Budgets, t: BudgetTable, own_variant: bool) -> Budgets:
    pct = {q: dict(v) for q, v in b.percentiles.items()}
    for q, v in t.percentiles.items():
        pct[q] = {**pct.get(q, {}), **v}
    return Budgets(
        path=b.path,
        board=b.board,
        variant=b.variant,
        own_variant=own_variant,
        power_to_ui_s=t.power_to_ui_s if t.power_to_ui_s is not None else b.power_to_ui_s,
        stages={**b.stages, **t.stages},
        percentiles=dict(sorted(pct.items())),
        energy={**b.energy, **t.energy},
    )


def _check_stages(path: Path, t: BudgetTable, stage_names: tuple[str, ...]) -> None:
    for key, name in t.stage_keys():
        if name not in stage_names:
            raise ConfigError(f"{path}: key '{key}': not a stage ({', '.join(stage_names)})")


@dataclass(frozen=True)
class BudgetFile:
    """Every board's budgets. `path` None: there is no budgets file, so no budgets."""

    path: Path | None
    boards: Mapping[str, BoardBudgets] = field(default_factory=dict)

    def has(self, board: str) -> bool:
        return board in self.boards

    def budgets(
        self, board: str, variant: str | None, stage_names: tuple[str, ...] = ()
    ) -> Budgets:
        """The budgets of `board` and `variant` (None, or a variant the file does not
        name: the board's own). `stage_names`, the rig config's stages, catches a
        misspelt stage in the tables used; the error names the file and the key."""
        b = self.boards.get(board)
        if b is None or self.path is None:
            known = ", ".join(self.boards) or "none"
            where = self.path or "no budgets file"
            raise ConfigError(
                f"{where}: no budgets for board {board!r} (boards here: {known}); add a "
                f"[boards.{board}] table to it, or name the board's own budgets file: "
                'budgets = "FILE" in the rig config\'s [board] table, --variable '
                "BUDGETS:FILE for the Robot suites, --budgets FILE for rig soak"
            )
        vt = b.variants.get(variant) if variant is not None else None
        for t in (b.table, vt):
            if stage_names and t is not None:
                _check_stages(self.path, t, stage_names)
        out = _apply(Budgets(self.path, board, variant), b.table, False)
        return _apply(out, vt, True) if vt is not None else out


#: What applies without a budgets file: no budgets at all (docs/robot.md, "Without the
#: file"). Not a second set of numbers that could drift from the file.
NO_BUDGETS = BudgetFile(None)
