"""The bootrig Robot Framework library (`Library    rig.robot.BootRig`)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from robot.api import logger
from robot.api.deco import keyword
from robot.result import TestSuite as SuiteResult
from robot.running import TestSuite as SuiteData

from rig import __version__
from rig.artifacts.rundir import REPORT, read_report
from rig.config.budgets import read_budgets
from rig.config.load import RigConfig
from rig.measure.pipeline import analyze_folder
from rig.model.budgets import TOTAL_KEY, Budgets
from rig.model.summary import Limits
from rig.names import DEFAULT_CONFIG, TOTAL
from rig.outcomes import Outcome
from rig.robot import messages
from rig.robot.boot import Boot, describe_outcome, expected_outcome, outcome_is, seconds
from rig.robot.change import ChangeGain
from rig.robot.doc import LIBRARY_DOC
from rig.robot.energy import EnergyBudgets
from rig.robot.regression import RegressionCheck
from rig.robot.statistics import SoakStatistics
from rig.robot.target import Target
from rig.sinks.files import save_report
from rig.sinks.influx.deliver import deliver_or_note
from rig.soak.run import run_soak
from rig.soak.start import parse_duration


class _Listener:
    """Names the board, config and place in the suite's metadata (pabot merges many runs
    of one suite into one output.xml), and releases the instruments and the place when
    the suite ends, also after a failure."""

    ROBOT_LISTENER_API_VERSION = 3

    def __init__(self, lib: BootRig) -> None:
        self.lib = lib
        self._named = False

    def start_suite(self, data: SuiteData, result: SuiteResult) -> None:
        if not self._named:  # the importing suite, not the children of an __init__
            self._named = True
            result.metadata.update(self.lib.target.metadata())

    def close(self) -> None:
        self.lib.target.close()


class BootRig(SoakStatistics, EnergyBudgets, RegressionCheck, ChangeGain):
    __doc__ = LIBRARY_DOC
    ROBOT_LIBRARY_SCOPE = "SUITE"
    ROBOT_LIBRARY_VERSION = __version__
    ROBOT_LIBRARY_DOC_FORMAT = "ROBOT"
    ROBOT_AUTO_KEYWORDS = False

    def __init__(
        self,
        config: str = str(DEFAULT_CONFIG),
        board: str | None = None,
        deliver: bool = True,
        place: str | None = None,
    ) -> None:
        """The rig is described by ``config`` (a rig configuration file, relative to the
        directory Robot runs in); ``board`` boots another simulated board profile instead
        of the config's. With ``deliver`` (the default) each measured boot also goes to
        InfluxDB when the config has an ``[influx]`` table.

        ``place`` boots the board of that labgrid place, as ``rig run --place`` does (the
        config's ``[target]`` says how to reach labgrid): the place is acquired at the
        suite's first power cycle, its power, console and exported analyzer used, and it
        is released when the suite ends, also after a failure. ``${NONE}`` (the default)
        keeps the config's own target. Budgets are those of the board the config names.

        | =Setting= | =Value=           | =Value=          | =Value=                       |
        | Library   | rig.robot.BootRig | config=${CONFIG} |                               |
        | Library   | rig.robot.BootRig | config=${CONFIG} | board=config/boards/fast.toml |
        | Library   | rig.robot.BootRig | config=${CONFIG} | place=${PLACE}                |
        """
        self.target = Target(Path(config), Path(board) if board else None, place)
        self.cfg: RigConfig = self.target.cfg
        self.board = self.target.board
        self.deliver = deliver
        self.boots: list[Boot] = []
        self.budgets: Budgets | None = None
        self._captured: list[Path] = []
        self.ROBOT_LIBRARY_LISTENER = _Listener(self)

    @keyword("Power Cycle Target")
    def power_cycle_target(self) -> str:
        """Power-cycles the target once and records the boot, without analyzing it.

        Switches the supply off, holds it off (``[power] off_hold_s``), arms the logic
        analyzer, powers on and reads the console until the ``ui_ready`` tag or the boot
        timeout. Returns the artifact folder (``results/<run-id>/``); `Analyze Boot`
        turns it into a measured boot. Fails only when the rig itself fails (a relay or
        console that cannot be opened); a board that does not boot is a measurement.

        | ${folder}= | Power Cycle Target |
        | ${report}= | Analyze Boot       | ${folder} |
        """
        session = self.target.session()
        try:
            result = session.cycle()
        except Exception:
            session.reset()  # the next keyword starts the instruments afresh
            raise
        logger.info(f"Artifacts: {result.folder}")
        return str(result.folder)

    @keyword("Analyze Boot")
    def analyze_boot(self, folder: str) -> dict[str, Any]:
        """Analyzes the artifact folder of a boot and adds it to the measured boots.

        The report (``report.json``) is returned as a dictionary: ``outcome``,
        ``power_to_ui_s``, ``stages`` (each with ``name`` and ``duration_s``) and more,
        see docs/artifacts.md. The budget keywords check the latest measured boot.
        """
        path = Path(folder)
        report = analyze_folder(path)
        save_report(path, report)
        if self.deliver and self.cfg.influx is not None:
            d = deliver_or_note(report, self.cfg.influx, self.cfg.results_dir)
            (logger.warn if d.status == "failed" else logger.info)(d.describe())
        self._add(Boot(report, path.resolve()))
        return report.to_json()

    @keyword("Analyse Boot")
    def analyse_boot_deprecated(self, folder: str) -> dict[str, Any]:
        """*Deprecated:* the old spelling of `Analyze Boot`, kept so that suites written
        for it still run; it logs a warning."""
        logger.warn("'Analyse Boot' is deprecated: use 'Analyze Boot'")
        return self.analyze_boot(folder)

    @keyword("Measure Boot")
    def measure_boot(self) -> dict[str, Any]:
        """Power-cycles the target and analyzes the boot: `Power Cycle Target` followed by
        `Analyze Boot`. Returns the report.

        | ${report}=           | Measure Boot |
        | Should Be Equal      | ${report}[outcome] | ok |
        """
        return self.analyze_boot(self.power_cycle_target())

    @keyword("Measure Boots")
    def measure_boots(self, count: int) -> list[dict[str, Any]]:
        """Measures ``count`` boots in a row and returns their reports.

        | Measure Boots | 20 |
        | Stage Percentile Should Be Within Budget | kernel | 95 | 140ms | last=20 |
        """
        return [self.measure_boot() for _ in range(count)]

    @keyword("Run Soak")
    def run_soak(self, cycles: int | None = None, duration: str | None = None) -> dict[str, Any]:
        """Runs a soak of ``cycles`` power cycles (or for ``duration``, e.g. ``10m``) the
        way ``rig soak`` does (journal, summary, InfluxDB) and adds its boots to the
        measured boots. Given neither, the config's ``[soak]`` decides, else 100 cycles,
        as for ``rig soak``. Returns the soak summary (``outcomes``, ``failure_rate``,
        ``stages`` statistics, ``folder``...).

        | ${summary}= | Run Soak | cycles=30 |
        | Failure Rate Should Be At Most | 0 % |
        """
        self.target.claim()  # the suite's place, also when the soak is its first boot
        self.target.release()  # one board, one owner: the soak starts its own instruments
        limits: Limits | None = Limits(cycles, parse_duration(duration) if duration else None)
        if cycles is None and duration is None:
            limits = None  # as `rig soak`: the config's [soak], else DEFAULT_CYCLES
        result = run_soak(
            self.cfg,
            limits=limits,
            board=self.board,
            show=False,
            handle_signals=False,
            budgets=self.budgets,  # the loaded ones, if any: summary.json gives verdicts
        )
        for folder in sorted(p for p in result.folder.iterdir() if (p / REPORT).is_file()):
            try:
                self._add(Boot(read_report(folder / REPORT), folder))
            except ValueError:
                continue  # an unreadable report: the soak's summary counts that cycle
        s = result.summary
        logger.info(
            f"Soak {s.soak_id}: {s.cycles.run} cycles, outcomes {s.outcomes}; summary {result.html}"
        )
        return s.to_json()

    def _add(self, boot: Boot) -> None:
        self.boots.append(boot)
        rows = "".join(
            f"<tr><td>{s.name}</td><td>{_fmt(s.duration_s)}</td><td>{s.source or ''}</td></tr>"
            for s in boot.report.stages
        )
        logger.info(
            f"Boot {boot.run_id}: outcome {boot.outcome}, power to UI "
            f"{_fmt(boot.report.power_to_ui_s)}<table>{rows}</table>"
            f"Artifacts: {boot.folder}",
            html=True,
        )

    @keyword("Load Budgets")
    def load_budgets(
        self, path: str | None = None, board: str | None = None, default: str | None = None
    ) -> dict[str, Any]:
        """Loads the time and energy budgets of this rig's board (or ``board``) from ``path``.

        Without ``path``: the file the rig config names (``[board] budgets``), else
        ``default``, else ``budgets.toml`` next to the rig config. The rig config's
        board variant selects a ``variants`` table when the file has one: its keys
        replace the board's, key by key (docs/robot.md). Returns the budgets as a
        dictionary. Keywords given no budget use these.

        | Load Budgets | config/budgets.toml |
        | Load Budgets | ${BUDGETS} | default=${CURDIR}/budgets.toml | # ${NONE}: the config's |
        | Stage Should Be Within Budget | kernel |
        """
        stage_names = tuple(s.name for s in self.cfg.stages)
        named = path or self.cfg.budgets or default or self.cfg.budgets_file
        budgets = read_budgets(Path(os.path.normpath(named)))  # no "suite/../config" in errors
        self.budgets = b = budgets.budgets(board or self.cfg.board, self.cfg.variant, stage_names)
        out = {
            "power_to_ui_s": b.power_to_ui_s,
            "stages": dict(b.stages),
            "percentiles": {q: dict(v) for q, v in b.percentiles.items()},
            "energy": dict(b.energy),
        }
        logger.info(f"Budgets of {b.board} ({b.variant}) from {b.where()}: {out}")
        return out

    def _budget_or_load(self) -> Budgets:
        """The loaded budgets; else those of the rig config's budgets file."""
        if self.budgets is None:
            default = self.cfg.budgets_file
            if not default.is_file():
                raise AssertionError(
                    "No budgets loaded and no budget given: use Load Budgets or pass the "
                    "budget (e.g. 1.3s)"
                )
            self.load_budgets(str(default))
        assert self.budgets is not None
        return self.budgets

    def _budget(self, what: str, q: float | None = None) -> float:
        b = self._budget_or_load()
        key = TOTAL_KEY if what == TOTAL else what
        table = b.percentiles.get(q, {}) if q is not None else b.stages
        value = b.power_to_ui_s if (q is None and what == TOTAL) else table.get(key)
        if value is None:
            where = f"percentiles.{q:g}" if q is not None else "stages"
            raise AssertionError(f"No budget for {what} in {b.where()} ({where})")
        return value

    def _last(self) -> Boot:
        if not self.boots:
            raise AssertionError("No boot measured yet: use Measure Boot first")
        return self.boots[-1]

    @keyword("Boot Should Succeed")
    def boot_should_succeed(self) -> None:
        """Fails unless the latest measured boot reached every stage boundary (outcome
        ``ok``). The failure names the boot, its outcome and the artifact folder.

        The outcomes are those of `Outcome`; for ``interrupted``, ``rig_error``,
        ``analyzer_error`` and ``invalid_artifacts``, not the board's failures, the
        message says why.
        """
        boot = self._last()
        outcome = boot.outcome
        if outcome != Outcome.OK:
            analysis = boot.report.analysis
            detail = analysis.rig_error or next(iter(analysis.invalid), None)
            raise AssertionError(messages.failed_boot(boot.run_id, outcome, detail, boot.folder))

    @keyword("Boot Outcome Should Be")
    def boot_outcome_should_be(self, outcome: Outcome | str, stage: str | None = None) -> None:
        """Fails unless the latest measured boot's outcome is ``outcome`` (e.g. a test
        that injects a fault and checks the verdict), one of the `Outcome` values.

        A hang names its stage: ``hang_in`` with ``stage``, or the outcome as the report
        writes it, ``hang_in_<stage>``; ``hang_in`` alone accepts a hang in any stage.

        | Boot Outcome Should Be | panic   |              |
        | Boot Outcome Should Be | hang_in | stage=kernel |
        | Boot Outcome Should Be | hang_in_kernel |       |
        """
        kind, stage = expected_outcome(outcome, stage)
        if stage:
            self._known_stage(stage)
        boot = self._last()
        found = boot.outcome
        if not outcome_is(found, kind, stage):
            raise AssertionError(
                f"Boot {boot.run_id}: outcome {found}, expected {describe_outcome(kind, stage)}. "
                f"Artifacts: {boot.folder}"
            )

    def _within(self, what: str, label: str, budget: timedelta | None) -> None:
        boot = self._last()
        limit = seconds(budget) if budget is not None else self._budget(what)
        measured = boot.duration(what)
        if measured is None:
            raise AssertionError(
                messages.not_measured(boot.run_id, label, boot.outcome, limit, boot.folder)
            )
        if measured > limit:
            raise AssertionError(
                messages.over_budget(boot.run_id, label, measured, limit, boot.folder)
            )
        logger.info(f"Boot {boot.run_id}: {label} {measured:.6f} s, budget {limit:.6f} s")

    @keyword("Stage Should Be Within Budget")
    def stage_should_be_within_budget(self, stage: str, budget: timedelta | None = None) -> None:
        """Fails if ``stage`` of the latest measured boot took longer than ``budget``.

        ``budget`` is a Robot time (``1.3s``, ``140ms``, ``0.14``); without it, the
        loaded budgets (`Load Budgets`) give it. A stage that was not measured (the boot
        hung before it) fails too.

        | Stage Should Be Within Budget | kernel | 1.3s |
        | Stage Should Be Within Budget | rootfs_mount |  | # from config/budgets.toml |

        Failure: ``Boot 20250101T020304Z-a1b2c3: stage 'kernel' took 1.402153 s, over its
        budget of 1.300000 s by 0.102153 s (+7.9 %). Artifacts: results/20250101T...``
        """
        self._known_stage(stage)
        self._within(stage, f"stage '{stage}'", budget)

    @keyword("Power To UI Should Be Within Budget")
    def power_to_ui_should_be_within_budget(self, budget: timedelta | None = None) -> None:
        """Fails if the latest measured boot took longer than ``budget`` from the power
        edge to the ``ui_ready`` marker (power-to-UI); budgets as in
        `Stage Should Be Within Budget`.

        | Power To UI Should Be Within Budget | 0.8s |
        """
        self._within(TOTAL, "power-to-UI", budget)

    @keyword("All Stages Should Be Within Budget")
    def all_stages_should_be_within_budget(self) -> None:
        """Checks every stage of the latest boot that has a loaded budget, and
        power-to-UI; fails once, listing every overrun (one message per line).

        | Load Budgets | config/budgets.toml |
        | Measure Boot |
        | All Stages Should Be Within Budget |
        """
        b = self._budget_or_load()
        names = [s.name for s in self.cfg.stages if s.name in b.stages]
        checks = [(n, f"stage '{n}'") for n in names]
        if b.power_to_ui_s is not None:
            checks.append((TOTAL, "power-to-UI"))
        errors = []
        for what, label in checks:
            try:
                self._within(what, label, None)
            except AssertionError as e:
                errors.append(str(e))
        if errors:
            raise AssertionError("\n".join(errors))

    def _known_stage(self, stage: str) -> None:
        names = [s.name for s in self.cfg.stages]
        if stage not in names:
            raise AssertionError(f"Unknown stage {stage!r}: the stages are {', '.join(names)}")


def _fmt(v: object) -> str:
    return f"{v:.6f} s" if isinstance(v, float) else "-"
