"""Per-board time budgets (`config/budgets.toml`), in seconds.

    [boards.<board>]                    power_to_ui_s = 0.40
    [boards.<board>.stages]             kernel = 0.15, ...
    [boards.<board>.percentiles.95]     power_to_ui_s = 0.39, kernel = 0.14, ...
    [boards.<board>.energy]             kernel = 0.35, ...  (joules, from a supply's readings)
    [boards.<board>.variants.<variant>] the same keys, overriding the board's

The board and variant are the names a rig config (or a simulated board profile) gives.
The Grafana dashboards read `power_to_ui_s` and `stages` of the same file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rig.tomlcheck import ConfigError, Table, load_toml

SCHEMA = "bootrig.budgets/1"
TOTAL = "power_to_ui_s"


@dataclass(frozen=True)
class Budgets:
    path: Path
    board: str
    variant: str
    power_to_ui_s: float | None = None
    stages: dict[str, float] = field(default_factory=dict)
    percentiles: dict[float, dict[str, float]] = field(default_factory=dict)  # q -> budgets
    energy: dict[str, float] = field(default_factory=dict)  # stage -> joules

    def where(self) -> str:
        return f"{self.path} [boards.{self.board}]"


def _seconds(t: Table, key: str, unit: str = "seconds") -> float:
    v = t.float(key, min=0.0)
    if v <= 0:
        t.error(key, f"{unit} > 0", v)
    return float(v)


def _stage_table(
    t: Table, stage_names: tuple[str, ...], total_ok: bool, unit: str = "seconds"
) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in list(t.data):
        if key == TOTAL and total_ok:
            out[key] = _seconds(t, key, unit)
        elif stage_names and key not in stage_names:
            known = ", ".join((*stage_names, TOTAL) if total_ok else stage_names)
            raise ConfigError(f"{t.path}: key '{t.key(key)}': not a stage ({known})")
        else:
            out[key] = _seconds(t, key, unit)
    t.done()
    return out


def _percentiles(t: Table, stage_names: tuple[str, ...]) -> dict[float, dict[str, float]]:
    out: dict[float, dict[str, float]] = {}
    for key in list(t.data):
        try:
            q = float(key)
        except ValueError:
            q = -1.0
        if not 0 < q < 100:
            raise ConfigError(f"{t.path}: key '{t.key(key)}': expected a percentile 0 < q < 100")
        out[q] = _stage_table(t.table(key), stage_names, total_ok=True)
    t.done()
    return out


def _apply(b: Budgets, t: Table, stage_names: tuple[str, ...]) -> Budgets:
    total = _seconds(t, TOTAL) if t.has(TOTAL) else b.power_to_ui_s
    stages = {**b.stages, **_stage_table(t.table("stages"), stage_names, False)}
    pct = {q: dict(v) for q, v in b.percentiles.items()}
    for q, v in _percentiles(t.table("percentiles"), stage_names).items():
        pct[q] = {**pct.get(q, {}), **v}
    energy = {**b.energy, **_stage_table(t.table("energy"), stage_names, False, "joules")}
    return Budgets(b.path, b.board, b.variant, total, stages, pct, energy)


def load_budgets(
    path: Path, board: str, variant: str, stage_names: tuple[str, ...] = ()
) -> Budgets:
    """The budgets of `board` (and its `variant`, if the file has one); every error names
    the file and the key. `stage_names` (the config's stages) catches typos."""
    path = Path(path)
    root = Table(path, load_toml(path))
    schema = root.str("schema", SCHEMA)
    if schema != SCHEMA:
        root.error("schema", repr(SCHEMA), schema)
    boards = root.table("boards")
    root.done()
    if not boards.has(board):
        known = ", ".join(sorted(boards.data)) or "none"
        raise ConfigError(f"{path}: no budgets for board {board!r} (boards here: {known})")
    t = boards.table(board)
    out = _apply(Budgets(path, board, variant), t, stage_names)
    variants = t.table("variants")
    if variants.has(variant):
        vt = variants.table(variant)
        out = _apply(out, vt, stage_names)
        vt.done()
    for name in list(variants.data):
        variants.table(name)  # each must be a table (checked when selected)
    t.done()
    return out
