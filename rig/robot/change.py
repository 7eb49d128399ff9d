"""`Try Change`, `Try Advice` and `Change Should Gain`: boot the board with and without
a change (config overrides, or an advisory's knob), interleaved as `rig cost` and
`rig try` do, and fail a suite when the change does not deliver a stated gain on a stage
(docs/robot.md, "Changes"). A mixin of `BootRig`, which holds the config and the board."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum
from html import escape
from pathlib import Path
from typing import Any

from robot.api import logger
from robot.api.deco import keyword

from rig.analysis.choices import OFF, ON
from rig.artifacts.rundir import REPORT
from rig.config.load import RigConfig
from rig.config.target import place_override
from rig.cost.run import run_cost, seeded_apart
from rig.cost.stats import schedule
from rig.errors import ConfigError, InputError
from rig.instruments.drivers import load_config
from rig.names import TOTAL
from rig.robot.boot import Boot, seconds
from rig.robot.gain import StageGain, describe, shortfall, stage_gain, stated
from rig.robot.target import Target
from rig.trial.knobs import Untryable, overrides
from rig.trial.source import read_source, select
from rig.trial.stats import usual


class Order(Enum):
    """The order of `Try Change`'s boots, as ``rig cost --order`` (docs/cost.md):

    - ``random``: blocks of with-without-without-with or the reverse, by a seeded coin
      (the default: a linear drift cancels every two pairs, nothing periodic lines up);
    - ``abba``: with-without-without-with blocks;
    - ``abab``: with, without, with, without.
    """

    RANDOM = "random"
    ABBA = "abba"
    ABAB = "abab"


@dataclass(frozen=True)
class Change:
    """A change measured: its overrides, the boots' folder, each side's durations."""

    what: str  # as the messages name it
    sets: tuple[str, ...]
    folder: Path
    without: dict[str, list[float]]
    with_change: dict[str, list[float]]
    outcomes_without: list[str]
    outcomes_with: list[str]


class ChangeGain:
    # BootRig's: the board, its config, the boots and a check of a stage's name.
    target: Target
    cfg: RigConfig
    board: Path | None
    boots: list[Boot]
    _known_stage: Callable[[str], None]
    _change: Change | None = None

    @keyword("Try Change")
    def try_change(
        self,
        *overrides: str,
        pairs: int = 5,
        warmup: int = 1,
        order: Order = Order.RANDOM,
        seed: int = 0,
    ) -> dict[str, Any]:
        """Boots the board ``pairs`` times with the change and as many times without it,
        interleaved, and keeps both sides' stage durations for `Change Should Gain`.

        The change is one or more config overrides ``KEY=VALUE`` with a TOML value, as
        ``rig run --set`` takes them (quote strings: ``sim.uboot_env.bootdelay="0"``).
        The boots without it use the library's config (and board) as they are. First
        ``warmup`` uncounted boots of each side, then the ``pairs`` in ``order`` (see
        `Order`; ``seed`` seeds ``random``). Each side boots on a bench of its own where
        the target allows two at once (the simulator, QEMU), as ``rig cost`` does; the
        boots land in ``<results_dir>/cost-<id>/`` (``on-0001`` with the change,
        ``off-0001`` without). They are not measured boots of the suite: the budget and
        percentile keywords do not see them.

        Returns ``folder``, ``sets``, the outcomes of each side and, per stage and
        ``power_to_ui``, the gain (without - with, seconds) with its one-sided 95 %
        lower bound (``gains``).

        | Try Change | sim.uboot_env.bootdelay="0" | pairs=5 |
        | Try Change | sim.kernel_args="lpj=1495040" | sim.uboot_env.verify="no" | warmup=0 |
        """
        if not overrides:
            raise AssertionError(
                'Try Change needs a change: KEY=VALUE, e.g. sim.kernel_args="quiet"'
            )
        return self._measure(", ".join(overrides), tuple(overrides), pairs, warmup, order, seed)

    @keyword("Try Advice")
    def try_advice(
        self,
        rule: str,
        source: str | None = None,
        pairs: int = 5,
        warmup: int = 1,
        order: Order = Order.RANDOM,
        seed: int = 0,
    ) -> dict[str, Any]:
        """`Try Change` with the knob of advisory ``rule`` of a boot's report: the change
        ``rig try`` makes for it (docs/try.md, "Targets": a kernel argument through
        ``sim.kernel_args`` or ``qemu.kernel_args``, a U-Boot variable through
        ``[sim.uboot_env]`` or ``[qemu.uboot_env]``).

        ``source`` is a run folder, its ``report.json`` or a soak folder, as for ``rig
        try``; without it, the latest measured boot of this suite. Fails when the report
        has no such advisory (the message lists those it has) or this target cannot apply
        its knob (the message says why). Returns what `Try Change` does, and ``rule``,
        ``knob`` and ``predicted_s`` (the advisory's own estimate).

        | Measure Boot |
        | Try Advice | uboot_bootdelay | pairs=4 |
        | Change Should Gain | bootloader | 900ms |
        """
        if source is None and not self.boots:
            raise AssertionError("No boot measured yet: use Measure Boot, or give source=")
        try:
            if source is None:
                report_path = self.boots[-1].folder / REPORT
            else:
                report_path = read_source(Path(source))
            advice = select(report_path, (rule,))
        except InputError as e:  # also a report.json that is no report (ArtifactError)
            raise AssertionError(
                f"Advice {rule}: {str(e).replace(f'--advice {rule}: ', '')}"
            ) from None
        if not advice.tried:
            (why,) = (w for r, w in advice.untried if r == rule)
            raise AssertionError(f"Advice {rule} of {report_path}: nothing to try ({why})")
        a = advice.tried[0]
        assert a.knob is not None
        try:
            sets = overrides(a.knob, self.cfg, advice.cmdline)
        except Untryable as e:
            raise AssertionError(f"Advice {rule} ({a.knob.setting}): {e}") from None
        out = self._measure(f"{rule} ({', '.join(sets)})", tuple(sets), pairs, warmup, order, seed)
        return {**out, "rule": rule, "knob": a.knob.setting, "predicted_s": a.gain_s}

    def _configs(self, sets: Sequence[str]) -> dict[str, RigConfig]:
        """Both sides' configs: the library's (config, board, place), and it with `sets`.
        The side with the change boots from seed + 1 on the simulator unless it sets
        sim.seed: two simulators of one seed would repeat each other's variance."""
        t = self.cfg.target
        common = place_override(t.place if t is not None else None)
        try:
            on = load_config(self.cfg.path, board=self.board, overrides=[*common, *sets])
        except ConfigError as e:
            raise AssertionError(f"Change {', '.join(sets)}: {e}") from None
        return {OFF: self.cfg, ON: seeded_apart(on, sets)}

    def _measure(
        self, what: str, sets: tuple[str, ...], pairs: int, warmup: int, order: Order, seed: int
    ) -> dict[str, Any]:
        if pairs < 1 or warmup < 0:
            raise AssertionError(f"pairs must be >= 1 and warmup >= 0, got {pairs} and {warmup}")
        cfgs = self._configs(sets)
        self.target.claim()  # the suite's place, also when this is its first boot
        self.target.release()  # one board, one owner: the change's boots open their own
        run = run_cost(cfgs, schedule(pairs, order.value, seed), warmup, "fast", threading.Event())
        self._change = c = Change(
            what,
            sets,
            run.folder,
            run.sides[OFF].samples(),
            run.sides[ON].samples(),
            run.outcomes(OFF),
            run.outcomes(ON),
        )
        names = [*(s.name for s in self.cfg.stages), TOTAL]
        gains = {n: _gain(c, n, 0.05) for n in names}
        rows = "".join(f"<tr><td>{n}</td><td>{describe(g)}</td></tr>" for n, g in gains.items())
        head = escape(f"Change {what}: {pairs} pairs in {run.folder} ({run.wall_s:.1f} s)")
        logger.info(f"{head}<table>{rows}</table>", html=True)
        return {
            "folder": str(run.folder),
            "sets": list(sets),
            "outcomes_without": dict(Counter(c.outcomes_without)),
            "outcomes_with": dict(Counter(c.outcomes_with)),
            "gains": {
                n: {"gain_s": g.gain_s, "low_s": g.low_s, "confidence": g.confidence}
                for n, g in gains.items()
            },
        }

    @keyword("Change Should Gain")
    def change_should_gain(
        self, stage: str, gain: timedelta, alpha: float = 0.05, msg: str | None = None
    ) -> dict[str, Any]:
        """Fails unless the change of the latest `Try Change` (or `Try Advice`) gains at
        least ``gain`` on ``stage`` (a stage of the rig config, or ``power_to_ui``).

        The gain is without - with: the Hodges-Lehmann shift of the stage's durations
        (``rig compare``'s statistics, docs/compare.md). The check is on its lower bound,
        one-sided at confidence 1 - ``alpha`` (the lower end of the two-sided 1 - 2
        ``alpha`` interval): the keyword passes only when the boots rule out every gain
        smaller than ``gain``, so a change that gains a little less than stated, or boots
        too few to tell, fail. ``gain`` is a Robot time (``20ms``, ``1s``); a negative
        one (``-5ms``) states the most a change may cost. Every boot with the change must
        also end as most boots without it did (a change that breaks the boot fails
        whatever it gains).

        ``msg`` replaces the failure message. Returns the gain (``gain_s``, ``low_s``,
        ``high_s``, ``confidence``, the boots of each side).

        | Try Change | sim.kernel_args="lpj=1495040" | pairs=5 |
        | Change Should Gain | kernel | 20ms |
        | Change Should Gain | power_to_ui | 20ms | alpha=0.01 |

        Failure: ``Change sim.kernel_args="lpj=1495040" does not gain 100 ms on stage
        'kernel': gain +47.049 ms (without - with, median shift), 95% lower bound +47.048
        ms (90% interval +47.048 ms .. +47.050 ms); 5 boots with the change against 5
        without: its lower bound is under 100 ms. Boots: results/cost-...``
        """
        c = self._change
        if c is None:
            raise AssertionError("No change measured yet: use Try Change or Try Advice first")
        if stage != TOTAL:
            self._known_stage(stage)
        try:
            g = _gain(c, stage, alpha)
        except ValueError as e:
            raise AssertionError(str(e)) from None
        least = seconds(gain)
        label = "power-to-UI" if stage == TOTAL else f"stage '{stage}'"
        head = f"Change {c.what} does not gain {stated(least)} on {label}"
        base = usual(c.outcomes_without)
        if base is not None and any(o != base for o in c.outcomes_with):
            why = (
                f"the boot's outcome changed: without {dict(Counter(c.outcomes_without))}, "
                f"with {dict(Counter(c.outcomes_with))}"
            )
        else:
            why = shortfall(g, least)
        if why is not None:
            raise AssertionError(msg or f"{head}: {describe(g)}: {why}. Boots: {c.folder}")
        logger.info(f"Change {c.what} gains at least {stated(least)} on {label}: {describe(g)}")
        return {
            "stage": stage,
            "gain_s": g.gain_s,
            "low_s": g.low_s,
            "high_s": g.high_s,
            "confidence": g.confidence,
            "n_with": g.n_with,
            "n_without": g.n_without,
            "folder": str(c.folder),
        }


def _gain(c: Change, stage: str, alpha: float) -> StageGain:
    return stage_gain(stage, c.without.get(stage, []), c.with_change.get(stage, []), alpha)
