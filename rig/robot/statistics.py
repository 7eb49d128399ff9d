"""Keywords over many boots (a soak, Measure Boots): percentiles against budgets,
the failure rate, statistics. A mixin of `BootRig`, which holds the boots and budgets."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from robot.api import logger
from robot.api.deco import keyword

from rig.model.codec import dump
from rig.names import TOTAL
from rig.outcomes import Outcome, is_boards
from rig.robot import messages
from rig.robot.boot import Boot, seconds
from rig.soak.stats import describe, percentile


class SoakStatistics:
    # BootRig's: the boots, a budget from the loaded budgets, a check of a stage's name.
    boots: list[Boot]
    _budget: Callable[[str, float | None], float]
    _known_stage: Callable[[str], None]

    def _window(self, last: int | None) -> list[Boot]:
        if last is not None and last < 1:
            raise AssertionError(f"last must be at least 1, got {last}")
        boots = self.boots[-last:] if last else self.boots
        if not boots:
            raise AssertionError("No boot measured yet: use Measure Boots or Run Soak first")
        return boots

    def _cold(self, boots: list[Boot], include_warm: bool) -> list[Boot]:
        """The boots statistics count: those the report flags as not a true cold boot
        (docs/cold-boot.md) are left out, and said so, unless `include_warm`."""
        if include_warm:
            return boots
        cold = [b for b in boots if not b.report.not_cold]
        if len(cold) < len(boots):
            warm = ", ".join(b.run_id for b in boots if b.report.not_cold)
            logger.info(
                f"{len(boots) - len(cold)} of {len(boots)} boots were not a true cold boot "
                f"(left out; include_warm=True counts them): {warm}"
            )
        return cold

    def _percentile(
        self,
        what: str,
        label: str,
        q: float,
        budget: timedelta | None,
        last: int | None,
        include_warm: bool = False,
    ) -> None:
        if not 0 < q < 100:
            raise AssertionError(f"percentile must be between 0 and 100, got {q:g}")
        boots = self._cold(self._window(last), include_warm)
        limit = seconds(budget) if budget is not None else self._budget(what, q)
        # A duration that is no number (NaN, inf) is no measurement: left out, as a boot
        # that did not measure it is (a NaN percentile passed any budget: NaN > x is false).
        values = [(b, d) for b in boots if (d := b.duration(what)) is not None and math.isfinite(d)]
        value = percentile([d for _, d in values], q)
        if value is None:
            raise AssertionError(f"{label}: none of the last {len(boots)} boots measured it")
        if value > limit:
            worst = [(b.run_id, d, b.folder) for b, d in sorted(values, key=lambda bd: -bd[1])[:3]]
            name = label[0].upper() + label[1:]
            msg = messages.percentile_over(name, q, len(values), value, limit, worst)
            raise AssertionError(msg)
        logger.info(f"{label} p{q:g} over {len(values)} boots: {value:.6f} s, budget {limit:.6f} s")

    @keyword("Stage Percentile Should Be Within Budget")
    def stage_percentile_should_be_within_budget(
        self,
        stage: str,
        percentile: float,
        budget: timedelta | None = None,
        last: int | None = None,
        include_warm: bool = False,
    ) -> None:
        """Fails if the ``percentile`` (0 < q < 100) of ``stage``'s duration over the last
        ``last`` measured boots (default: all of them) exceeds ``budget``.

        Boots that did not measure the stage are left out (`Failure Rate Should Be At
        Most` counts them), and so are boots the report flags as not a true cold boot
        unless ``include_warm=True``. Percentiles interpolate linearly between closest ranks.
        Without ``budget``, ``[boards.<board>.percentiles.<q>]`` of the loaded budgets
        gives it.

        | Measure Boots | 20 |
        | Stage Percentile Should Be Within Budget | kernel | 95 | 1.4s |
        | Stage Percentile Should Be Within Budget | kernel | 95 | last=10 |

        The failure names the percentile, the budget, the overshoot and the three slowest
        boots with their artifact folders.
        """
        self._known_stage(stage)
        self._percentile(stage, f"stage '{stage}'", percentile, budget, last, include_warm)

    @keyword("Power To UI Percentile Should Be Within Budget")
    def power_to_ui_percentile_should_be_within_budget(
        self,
        percentile: float,
        budget: timedelta | None = None,
        last: int | None = None,
        include_warm: bool = False,
    ) -> None:
        """Like `Stage Percentile Should Be Within Budget`, for power-to-UI.

        | Power To UI Percentile Should Be Within Budget | 99 | 0.8s |
        """
        self._percentile(TOTAL, "power-to-UI", percentile, budget, last, include_warm)

    @keyword("Failure Rate Should Be At Most")
    def failure_rate_should_be_at_most(
        self, rate: str, last: int | None = None, include_warm: bool = False
    ) -> None:
        """Fails if more than ``rate`` of the last ``last`` measured boots (default all)
        did not succeed. ``rate`` is a fraction (``0.05``) or a percentage (``5 %``).
        Boots flagged as not a true cold boot are left out unless ``include_warm=True``.

        | Failure Rate Should Be At Most | 2 % |
        """
        limit = _rate(rate)
        window = self._cold(self._window(last), include_warm)
        # Runs the rig or the operator ended say nothing of the board: not counted.
        boots = [b for b in window if is_boards(b.outcome)]
        if len(boots) < len(window):
            logger.info(
                f"{len(window) - len(boots)} of the last {len(window)} boots were not "
                "measured (interrupted, rig_error, invalid_artifacts): not counted"
            )
        if not boots:
            raise AssertionError(
                f"None of the last {len(window)} boots measured the board: outcomes "
                f"{sorted({b.outcome for b in window})}"
            )
        failed = [b for b in boots if b.outcome != Outcome.OK]
        share = len(failed) / len(boots)
        if share > limit:
            listed = "; ".join(f"{b.run_id} {b.outcome} ({b.folder})" for b in failed[:5])
            raise AssertionError(
                f"{len(failed)} of the last {len(boots)} measured boots failed ({share:.1%}), "
                f"more than {limit:.1%}: {listed}"
            )

    @keyword("Get Stage Statistics")
    def get_stage_statistics(
        self, stage: str, last: int | None = None, include_warm: bool = False
    ) -> dict[str, Any]:
        """Returns ``n``, ``min``, ``p50``, ``p95``, ``p99``, ``max``, ``mean`` and
        ``stddev`` (seconds) of ``stage`` (or ``power_to_ui``) over the last ``last``
        measured boots that measured it.

        | ${stats}= | Get Stage Statistics | kernel |
        | Should Be True | ${stats}[stddev] < 0.005 |
        """
        if stage != TOTAL:
            self._known_stage(stage)
        boots = self._cold(self._window(last), include_warm)
        values = [d for b in boots if (d := b.duration(stage)) is not None]
        return dump(describe(values))


def _rate(text: str) -> float:
    s = str(text).strip()
    try:
        value = float(s.rstrip("%").strip()) / 100 if s.endswith("%") else float(s)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:
        raise AssertionError(f"rate {text!r}: expected a fraction 0..1 or a percentage 0..100 %")
    return value
