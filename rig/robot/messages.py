"""Failure messages of the budget keywords, each one sentence: the boot (run id), the
stage, what was measured, the budget, the overshoot and where the artifacts are."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.outcomes import is_boards


def seconds(v: float) -> str:
    return f"{v:.6f} s"


def overshoot(measured: float, budget: float, unit: Callable[[float], str] = seconds) -> str:
    over = measured - budget
    return f"by {unit(over)} (+{100 * over / budget:.1f} %)"


def over_budget(run_id: str, what: str, measured: float, budget: float, folder: Path) -> str:
    return (
        f"Boot {run_id}: {what} took {seconds(measured)}, over its budget of "
        f"{seconds(budget)} {overshoot(measured, budget)}. Artifacts: {folder}"
    )


def not_measured(run_id: str, what: str, outcome: str, budget: float, folder: Path) -> str:
    return (
        f"Boot {run_id}: {what} was not measured (outcome {outcome}); its budget is "
        f"{seconds(budget)}. Artifacts: {folder}"
    )


def percentile_over(
    what: str,
    q: float,
    n: int,
    value: float,
    budget: float,
    slowest: list[tuple[str, float, Path]],
) -> str:
    worst = "; ".join(f"boot {rid} {seconds(v)} (artifacts: {f})" for rid, v, f in slowest)
    return (
        f"{what} p{q:g} over the last {n} measured boots is {seconds(value)}, over its "
        f"budget of {seconds(budget)} {overshoot(value, budget)}. Slowest: {worst}"
    )


def failed_boot(run_id: str, outcome: str, detail: str | None, folder: Path) -> str:
    why = f" ({detail})" if detail else ""
    if not is_boards(outcome):
        why += "; not the board's failure: the run did not measure the boot"
    return f"Boot {run_id} did not succeed: outcome {outcome}{why}. Artifacts: {folder}"


def joules(v: float) -> str:
    return f"{v:.4f} J"


def over_energy(
    run_id: str, stage: str, measured: float, u: float, budget: float, folder: Path
) -> str:
    return (
        f"Boot {run_id}: stage '{stage}' used {joules(measured)} (± {joules(u)}), over its "
        f"energy budget of {joules(budget)} {overshoot(measured, budget, joules)}. "
        f"Artifacts: {folder}"
    )


def no_energy(run_id: str, stage: str, why: str, budget: float, folder: Path) -> str:
    return (
        f"Boot {run_id}: stage '{stage}' has no energy ({why}); its energy budget is "
        f"{joules(budget)}. Artifacts: {folder}"
    )
