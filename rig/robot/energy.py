"""Energy keywords: a stage's energy from the supply's readings against a budget. A mixin
of `BootRig`, which holds the boots and budgets."""

from __future__ import annotations

import math
from collections.abc import Callable

from robot.api import logger
from robot.api.deco import keyword

from rig.model.budgets import Budgets
from rig.robot import messages
from rig.robot.boot import Boot


class EnergyBudgets:
    # BootRig's: the latest measured boot, the loaded budgets, a check of a stage's name.
    _last: Callable[[], Boot]
    _budget_or_load: Callable[[], Budgets]
    _known_stage: Callable[[str], None]

    def _energy_budget(self, stage: str) -> float:
        b = self._budget_or_load()
        if stage not in b.energy:
            raise AssertionError(f"No energy budget for {stage} in {b.where()} (energy)")
        return b.energy[stage]

    @keyword("Stage Energy Should Be Within Budget")
    def stage_energy_should_be_within_budget(self, stage: str, budget: float | None = None) -> None:
        """Fails if ``stage`` of the latest measured boot used more than ``budget``
        joules, as integrated from the bench supply's current and voltage readings
        (``[power] driver = "visa"``, docs/power.md).

        Without ``budget`` the loaded budgets' ``[boards.<board>.energy]`` table gives it
        (`Load Budgets`). A stage with no energy fails too, saying why: the rig's power
        driver reads no current (a relay), or no reading fell around the stage. The
        measured value is compared; its uncertainty is in the message.

        | Stage Energy Should Be Within Budget | kernel | 0.5 |
        | Stage Energy Should Be Within Budget | application |  | # from config/budgets.toml |

        Failure: ``Boot 20250101T020304Z-a1b2c3: stage 'kernel' used 0.5321 J (± 0.0040
        J), over its energy budget of 0.5000 J by 0.0321 J (+6.4 %). Artifacts: ...``
        """
        self._known_stage(stage)
        limit = float(budget) if budget is not None else self._energy_budget(stage)
        if not 0 < limit < math.inf:  # a NaN budget passed every stage (NaN > x is false)
            raise AssertionError(f"An energy budget must be > 0 J, got {limit:g}")
        boot = self._last()
        measured = boot.energy(stage)
        if measured is None:
            raise AssertionError(
                messages.no_energy(boot.run_id, stage, _why(boot, stage), limit, boot.folder)
            )
        joules, u = measured
        if joules > limit:
            raise AssertionError(
                messages.over_energy(boot.run_id, stage, joules, u, limit, boot.folder)
            )
        logger.info(
            f"Boot {boot.run_id}: stage '{stage}' used {joules:.4f} J (± {u:.4f} J), "
            f"budget {limit:.4f} J"
        )


def _why(boot: Boot, stage: str) -> str:
    power = boot.report.power
    if not power:
        return "the run has no supply readings: its power driver reads no current"
    if power.error:
        return f"the supply's readings could not be placed: {power.error}"
    s = boot.report.stage(stage)
    if s is None or s.duration_s is None:
        return f"the stage was not measured (outcome {boot.outcome})"
    return "no supply reading fell around it"
