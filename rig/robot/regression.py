"""`Stage Should Not Regress`: the suite's measured boots against a baseline (a soak, a
folder of runs, an InfluxDB selection), with `rig compare`'s statistics. A mixin of
`BootRig`, which holds the boots and the config."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta
from enum import Enum
from pathlib import Path
from typing import Any

from robot.api import logger
from robot.api.deco import keyword

from rig.compare.inputs import DEFAULT_WARMUP, Source, report_boot, split
from rig.compare.sources import load_source
from rig.compare.stats import INCONCLUSIVE, SLOWER, Settings, StageComparison, compare
from rig.config.load import RigConfig
from rig.errors import InputError
from rig.names import TOTAL
from rig.robot.boot import Boot, seconds


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 1e3:+.2f} ms"


def _shift(r: StageComparison, baseline: Source, measured: Source) -> str:
    """The comparison in one clause: the shift, its interval and p, and the boots."""
    ci = f"{r.confidence:.0%} CI {_ms(r.ci_low_s)} .. {_ms(r.ci_high_s)}"
    if r.ci_low_s is None:
        ci = f"no {r.confidence:.0%} CI"
    p = "n/a" if r.p_value is None else f"{r.p_value:.2g}"
    return (
        f"{_ms(r.difference_s)} after - before (median shift, {ci}, Mann-Whitney p = {p}); "
        f"{r.n_after} measured boots in {measured.location} against {r.n_before} of "
        f"baseline {baseline.location}"
    )


class Inconclusive(Enum):
    """What `Stage Should Not Regress` does when the boots cannot tell (verdict
    ``inconclusive``: too few boots for any p under ``alpha``, a difference as large as
    the boots detect that p does not confirm, or a threshold smaller than they detect).

    - ``fail``: the keyword fails with the reason and the boots a side that a change of
      the size seen needs (the default: a gate that cannot tell does not pass);
    - ``warn``: it passes and logs that message as a warning;
    - ``pass``: it passes and logs the message.
    """

    FAIL = "fail"
    WARN = "warn"
    PASS = "pass"


class RegressionCheck:
    boots: list[Boot]
    cfg: RigConfig
    _known_stage: Callable[[str], None]  # BootRig's: a check of a stage's name

    def _measured_source(self, warmup: int, last: int | None) -> Source:
        if not self.boots:
            raise AssertionError("No boot measured yet: use Measure Boots or Run Soak first")
        folders = [str(b.folder) for b in self.boots]
        where = os.path.commonpath(folders) if len(folders) > 1 else folders[0]
        boots = [report_boot(b.report, str(b.folder)) for b in self.boots]
        source = split(boots, Source("measured boots", "robot", where), warmup)
        if last is not None:
            source.boots = source.boots[-last:]
        return source

    @keyword("Stage Should Not Regress")
    def stage_should_not_regress(
        self,
        stage: str,
        baseline: str,
        alpha: float = 0.05,
        warmup: int = DEFAULT_WARMUP,
        threshold: timedelta | None = None,
        last: int | None = None,
        inconclusive: Inconclusive = Inconclusive.FAIL,
    ) -> dict[str, Any]:
        """Fails if ``stage`` got slower in the boots measured in this suite than in
        ``baseline``, at confidence 1 - ``alpha``; returns the comparison.

        ``baseline`` is a soak id (under the config's ``results_dir``), a soak folder, a
        folder of run folders or an ``influx:board=...,variant=...,since=7d`` selection
        (the config's ``[influx]``), as for ``rig compare``. ``stage`` may also be
        ``power_to_ui``. The first ``warmup`` boots of the baseline and of this suite's
        boots are left out (the first boot after a flash); ``last`` compares only the
        latest N measured boots; only boots with outcome ``ok`` count.

        The stage regressed when the Mann-Whitney test rejects "no change" (p <
        ``alpha``), the interval of the Hodges-Lehmann difference lies above zero and
        the difference is at least ``threshold`` (a Robot time, e.g. ``5ms``; default
        0). See docs/compare.md.

        When the boots cannot tell (verdict ``inconclusive``: e.g. 3 boots against 4 can
        never give p < 0.05, whatever they measure), ``inconclusive`` decides: ``fail``
        (default), ``warn`` or ``pass``; see `Inconclusive`. The message says why and how
        many boots a side a change of the size seen needs.

        | Run Soak | cycles=20 |
        | Stage Should Not Regress | kernel | baseline=nightly-2025-01-01 |
        | Stage Should Not Regress | power_to_ui | baseline=results/soak-x | threshold=10ms |
        | Stage Should Not Regress | kernel | baseline=nightly-2025-01-01 | inconclusive=warn |

        Failure: ``Stage 'kernel' regressed: +19.82 ms after - before (median shift, 95%
        CI +18.78 ms .. +21.02 ms, Mann-Whitney p = 2.8e-06); 19 measured boots in
        results/soak-y against 19 of baseline results/soak-x``
        """
        if stage != TOTAL:
            self._known_stage(stage)
        if warmup < 0 or (last is not None and last < 2):
            raise AssertionError(f"warmup must be >= 0 and last >= 2, got {warmup} and {last}")
        settings = Settings(
            alpha=alpha, threshold_s=seconds(threshold) if threshold is not None else 0.0
        )
        try:
            base = load_source(baseline, warmup, self.cfg.path)
        except InputError as e:
            raise AssertionError(f"Baseline {baseline}: {e}") from None
        mine = self._measured_source(warmup, last)
        before = [b.durations[stage] for b in base.boots if stage in b.durations]
        after = [b.durations[stage] for b in mine.boots if stage in b.durations]
        label = "Power-to-UI" if stage == TOTAL else f"Stage '{stage}'"
        for what, values, src in (("baseline", before, base), ("measured boots", after, mine)):
            if len(values) < 2:
                raise AssertionError(
                    f"{label}: {len(values)} {what} measured it ({src.location}; "
                    f"{len(src.warmup)} warm-up, {len(src.excluded)} excluded): need 2 or more"
                )
        r = compare(stage, before, after, settings)
        if r.verdict == SLOWER:
            raise AssertionError(f"{label} regressed: {_shift(r, base, mine)}")
        if r.verdict == INCONCLUSIVE:
            msg = f"{label} inconclusive: {_shift(r, base, mine)}: {r.note}"
            if inconclusive is Inconclusive.FAIL:
                raise AssertionError(msg)
            (logger.warn if inconclusive is Inconclusive.WARN else logger.info)(msg)
            return {**r.to_json(), "baseline": str(Path(base.location))}
        logger.info(
            f"{label}: {_ms(r.difference_s)} after - before ({r.confidence:.0%} CI "
            f"{_ms(r.ci_low_s)} .. {_ms(r.ci_high_s)}, p = {r.p_value}), verdict {r.verdict}; "
            f"{r.n_after} boots against {r.n_before} of {base.location}"
            + (f"; {r.note}" if r.note else "")
        )
        return {**r.to_json(), "baseline": str(Path(base.location))}
