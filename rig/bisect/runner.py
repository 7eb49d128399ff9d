"""`rig bisect`'s search (docs/bisect.md): the ends first, then each step's commit built
and booted in batches until its boots tell or its cap is reached. Every finished commit is
a journal line before the next starts, so `--resume` never boots a decided commit again."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from rig.bisect import plan
from rig.bisect.build import run_build, substitute
from rig.bisect.decide import UNDECIDED, Budget, Ends, budget, check_ends, decide, reachable
from rig.bisect.git import Snapshot, Worktree, subject
from rig.bisect.journal import Header, Journal, StepRecord
from rig.bisect.stage import stage_time
from rig.compare.inputs import report_boot
from rig.compare.stats import UNREACHABLE, Settings, StageComparison, compare
from rig.config.load import RigConfig
from rig.cost.run import concurrent
from rig.errors import InputError, RigError
from rig.instruments.drivers import load_config
from rig.instruments.setup import Bench, Instruments
from rig.measure.cycle import run_cycle
from rig.measure.pipeline import analyze_folder
from rig.measure.session import reseeded
from rig.outcomes import Outcome
from rig.sinks.files import save_report

GOOD_END, BAD_END, STEP = "good_end", "bad_end", "step"
WORKTREE = "worktree"
#: Boots a commit may take per boot that counts: failed boots are retried this far.
ATTEMPTS = 2
Progress = Callable[[str], None]


@dataclass
class Result:
    folder: Path
    header: Header
    budget: Budget
    subjects: list[str]
    steps: dict[int, StepRecord]
    ends: Ends | None = None
    refused: str | None = None  # why the search did not start (exit 2)
    candidates: list[int] = field(default_factory=list)  # where the first bad commit is
    difference: StageComparison | None = None  # first bad against the last good
    interrupted: bool = False

    @property
    def found(self) -> int | None:
        return self.candidates[0] if len(self.candidates) == 1 and not self.refused else None

    @property
    def overall_error(self) -> float:
        taken = sum(1 for s in self.steps.values() if s.role == STEP and s.build == "ok")
        return self.budget.overall(taken)


def search_budget(h: Header) -> Budget:
    """The error budget of a search, or InputError when its boots could never decide."""
    try:
        b = budget(h.alpha, len(h.commits) - 1, h.batch, h.max_boots)
    except ValueError as e:
        raise InputError(str(e)) from None
    why = reachable(b, h.end_boots, h.max_boots, h.interleave)
    if why is not None:
        raise InputError(why)
    return b


class Search:
    def __init__(self, folder: Path, header: Header, journal: Journal,
                 steps: dict[int, StepRecord], engine: str = "fast") -> None:  # fmt: skip
        self.folder = folder.resolve()  # git -C runs elsewhere: no relative paths
        self.h = header
        self.journal = journal
        self.steps = steps
        self.engine = engine
        self.repo = Path(header.repo)
        self.n = len(header.commits) - 1
        self.budget = search_budget(header)

    def _out(self, index: int) -> Path:
        out = self.folder / "steps" / f"{index:03d}-{self.h.commits[index][:10]}"
        out.mkdir(parents=True, exist_ok=True)
        return out

    def _prepare(
        self, wt: Worktree, index: int, stop: threading.Event
    ) -> tuple[RigConfig | None, str]:
        """The config booting this commit's build, or None and why the build failed."""
        commit, out = self.h.commits[index], self._out(index)
        wt.checkout(commit)
        values = {"worktree": str(wt.path.resolve()), "commit": commit, "out": str(out)}
        argv = [substitute(a, values) for a in self.h.build]
        why = run_build(argv, wt.path, out / "build.log", self.h.build_timeout_s, stop)
        if why:
            return None, f"build failed: {why} (log: {out / 'build.log'})"
        return self._config(index), "ok"

    def _config(
        self, index: int, seed: int | None = None, results: Path | None = None
    ) -> RigConfig:
        """The config booting commit `index`'s build (in its {out}), into `results`; on the
        simulator with seed offset `seed` (default: the index)."""
        commit, out = self.h.commits[index], self._out(index)
        wt = str((self.folder / WORKTREE).resolve())
        values = {"worktree": wt, "commit": commit, "out": str(out)}
        sets = [substitute(s, values) for s in self.h.sets]
        cfg = load_config(Path(self.h.config), overrides=sets)
        cfg = dataclasses.replace(cfg, results_dir=results or out)
        # each bench its own run-to-run variance, as real boots
        return reseeded(cfg, index if seed is None else seed)

    def _boot(
        self, cfg: RigConfig, bench: Bench, rec: StepRecord, stop: threading.Event, side: str = ""
    ) -> bool:
        """One boot into `rec` (into `rec.ref[side]` for an end booted beside a step);
        False when it was interrupted."""
        prefix = f"{side or 'boot'}-"
        k = 1 + sum(1 for p in cfg.results_dir.iterdir() if p.name.startswith(prefix))
        run_id = f"{prefix}{k:03d}"
        cycle = run_cycle(cfg, bench, run_id=run_id, abort=stop)
        if cycle.run.aborted:
            return False
        report = analyze_folder(cycle.folder, engine=self.engine)
        save_report(cycle.folder, report, html=False)
        boot = report_boot(report, str(cycle.folder))
        t = stage_time(report, boot, self.h.stage)
        if boot.outcome != Outcome.OK:
            rec.failed.append([run_id, boot.outcome])
        elif isinstance(t, str):
            rec.failed.append([run_id, t])
        elif boot.not_cold is not None:
            rec.failed.append([run_id, f"not a cold boot ({boot.not_cold})"])
        else:
            times = rec.ref.setdefault(side, []) if side else rec.times
            times.append(t)
        return True

    def sample(self, index: int) -> list[float]:
        """The boots of commit `index`; for an end, with its boots beside every step."""
        own = list(self.steps[index].times)
        side = {0: "good", self.n: "bad"}.get(index)
        if side is None:
            return own
        return own + [t for r in self.steps.values() for t in r.ref.get(side, [])]

    def references(self, rec: StepRecord) -> tuple[list[float], list[float]]:
        """What step `rec` is compared with: the ends' boots taken beside it, in the same
        minutes of the bench (a bench that drifts, a host whose load changes, moves them
        and the step alike; the ends' earlier boots would not have moved), else, without
        boots beside it, all the ends' boots."""
        if rec.ref:
            return list(rec.ref.get("good", [])), list(rec.ref.get("bad", []))
        return self.sample(0), self.sample(self.n)

    def difference(self, good: int, bad: int) -> StageComparison:
        """What the first bad commit does: its boots against the last good one's, taken in
        the same minutes where the ends were booted beside the step (the first bad step
        against the good end beside it, or the bad end beside the last good step against
        it); else against the last good commit's boots."""
        settings = Settings(alpha=self.budget.alpha, power=self.budget.power)
        first, last = self.steps.get(bad), self.steps.get(good)
        if first is not None and first.ref:
            return compare(self.h.stage, first.ref.get("good", []), first.times, settings)
        if last is not None and last.ref:
            return compare(self.h.stage, last.times, last.ref.get("bad", []), settings)
        return compare(self.h.stage, self.sample(good), self.sample(bad), settings)

    def _ends(self, wt: Worktree, stop: threading.Event, progress: Progress) -> bool:
        need = [i for i in (0, self.n) if i not in self.steps]
        if not need:
            return True
        cfgs: dict[int, RigConfig] = {}
        for i in need:
            progress(f"building the {'good' if i == 0 else 'bad'} end {self.h.commits[i][:12]}")
            cfg, why = self._prepare(wt, i, stop)
            if stop.is_set():
                return False
            if cfg is None:
                end = "--good" if i == 0 else "--bad"
                raise InputError(f"{end} {self.h.commits[i][:12]}: {why}")
            cfgs[i] = cfg
        recs = {i: StepRecord(i, self.h.commits[i], GOOD_END if i == 0 else BAD_END, "ok")
                for i in need}  # fmt: skip
        together = concurrent(cfgs)
        tries = dict.fromkeys(need, 0)

        def more(i: int) -> bool:  # a failed boot is not a time: boot again, within reason
            return len(recs[i].times) < self.h.end_boots and tries[i] < ATTEMPTS * self.h.end_boots

        with ExitStack() as stack:
            benches: dict[int, Bench] = {}
            for group in [need] if together else [[i] for i in need]:
                while any(more(i) for i in group):
                    for i in (i for i in group if more(i)):
                        if i not in benches:
                            if not together:  # one end's bench at a time: they share ports
                                stack.close()
                                benches.clear()
                            benches[i] = stack.enter_context(Instruments(cfgs[i]))
                        end = "good" if i == 0 else "bad"
                        progress(f"booting the {end} end ({len(recs[i].times) + 1})")
                        tries[i] += 1
                        if not self._boot(cfgs[i], benches[i], recs[i], stop):
                            return False
        for i in need:
            self.journal.add(recs[i])
            self.steps[i] = recs[i]
        return True

    def _step(
        self, wt: Worktree, index: int, ends: Ends, stop: threading.Event, progress: Progress
    ) -> bool:
        commit = self.h.commits[index]
        progress(f"building {commit[:12]} ({index}/{self.n})")
        cfg, why = self._prepare(wt, index, stop)
        if stop.is_set():
            return False
        rec = StepRecord(index, commit, STEP, why)
        if cfg is None:
            rec.verdict = plan.SKIP
        else:
            cap, tries = self.h.max_boots, 0
            with ExitStack() as stack:
                bench = stack.enter_context(Instruments(cfg))
                refs = self._references(stack, cfg, index)
                while True:
                    goal = min(cap, len(rec.times) + self.h.batch)
                    while len(rec.times) < goal and tries < ATTEMPTS * cap:
                        progress(f"booting {commit[:12]} ({len(rec.times) + 1}/{cap} at most)")
                        tries += 1
                        if not self._boot(cfg, bench, rec, stop):
                            return False
                        for side in refs:  # then both ends: the same minutes of the bench
                            progress(f"booting the {side} end beside {commit[:12]}")
                            if not self._boot(*refs[side], rec, stop, side):
                                return False
                    good, bad = self.references(rec)
                    step = decide(good, bad, rec.times, ends, self.budget, self.h.stage)
                    if step.verdict != UNDECIDED or len(rec.times) < goal or goal == cap:
                        break
            rec.verdict, rec.p, rec.decision = step.verdict, step.p_value, step.to_json()
        self.journal.add(rec)
        self.steps[index] = rec
        return True

    def _references(
        self, stack: ExitStack, cfg: RigConfig, index: int
    ) -> dict[str, tuple[RigConfig, Bench]]:
        """The ends' benches beside step `index`'s, when booting them is cheap: each bench
        a process of its own (the simulator, QEMU), the ends' builds kept in their {out}.
        Their boots land in the step's folder (`good-001`, `bad-001`, ...)."""
        if not self.h.interleave or not concurrent({0: cfg}):
            return {}
        out: dict[str, tuple[RigConfig, Bench]] = {}
        for side, end in (("good", 0), ("bad", self.n)):
            # A seed of its own: a fresh simulator repeats its first boots for one seed.
            c = self._config(end, end + (self.n + 1) * (index + 1), cfg.results_dir)
            out[side] = (c, stack.enter_context(Instruments(c)))
        return out

    def _verdicts(self) -> dict[int, str]:
        out = {}
        for i, s in self.steps.items():
            if s.role == STEP:
                out[i] = s.verdict if s.verdict in (plan.GOOD, plan.BAD) else plan.SKIP
        return out

    def run(
        self,
        stop: threading.Event,
        progress: Progress = lambda _: None,
        note: Progress = lambda _: None,
    ) -> Result:
        """The search; `progress` gets what it is doing, `note` the plan once the ends are
        booted (what a step detects, the error rates), before any step boots."""
        with self.journal.locked():
            return self._run(stop, progress, note)

    def _run(self, stop: threading.Event, progress: Progress, note: Progress) -> Result:
        wt = Worktree(self.repo, self.folder / WORKTREE)
        before = Snapshot.take(self.repo, wt.path)
        subjects = [subject(self.repo, c) for c in self.h.commits]
        result = Result(self.folder, self.h, self.budget, subjects, self.steps)
        try:
            if not self._ends(wt, stop, progress):
                result.interrupted = True
                return result
            good, bad = self.steps[0].times, self.steps[self.n].times
            # the ends booted beside each step: asked for, and cheap (rig.cost.run)
            cheap = self.h.interleave and concurrent({0: self._config(0)})
            beside = self.h.max_boots if cheap else None
            ends = check_ends(good, bad, self.budget, self.h.max_boots, self.h.stage, beside)
            result.ends = ends
            note(plan_line(ends, self.budget, self.h.max_boots))
            if not ends.differ:
                result.refused = _refusal(ends, self.steps[0], self.steps[self.n])
                return result
            while (index := plan.next_index(self.n, self._verdicts())) is not None:
                if not self._step(wt, index, ends, stop, progress):
                    result.interrupted = True
                    return result
            b = plan.bounds(self.n, self._verdicts())
            result.candidates = list(b.candidates)
            if len(b.candidates) == 1:
                result.difference = self.difference(b.good, b.bad)
            return result
        finally:
            wt.close()
            after = Snapshot.take(self.repo, wt.path)
            if after != before:  # the rig's own failure: say so, never hide it
                raise RigError(f"{self.repo}: left changed by the bisect ({before} -> {after})")


def plan_line(ends: Ends, b: Budget, max_boots: int) -> str:
    """The search's plan in one line, stated before the first step."""
    c = ends.comparison
    line = (
        f"ends: good {ms(c.median_before_s)}, bad {ms(c.median_after_s)} "
        f"({ms(c.difference_s, True)}); error at most {b.alpha:.3g} overall, {b.per_step:.3g} "
        f"a step ({b.steps} planned), each test at p < {b.per_test:.2g}"
    )
    if ends.detectable_s is not None:
        line += (
            f"; {max_boots} boots of a step detect {ms(ends.detectable_s)} ({b.power:.0%} power)"
        )
    return line


def ms(v: float | None, sign: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v * 1e3:+.2f} ms" if sign else f"{v * 1e3:.2f} ms"


def _refusal(ends: Ends, good: StepRecord, bad: StepRecord) -> str:
    c = ends.comparison
    p = "-" if c.p_value is None else f"{c.p_value:.2g}"
    differ = "cannot be told apart" if c.inconclusive_reason == UNREACHABLE else "do not differ"
    text = (
        f"the good and bad ends {differ} in {c.name}: {len(good.times)} boots of the "
        f"good end against {len(bad.times)} of the bad give p = {p}, not under the "
        f"{1 - c.confidence:.2g} each test runs at"
    )
    if c.note:
        text += f"; {c.note}"
    for r in (good, bad):
        if r.failed:
            text += (
                f"; {len(r.failed)} boot(s) of the {r.role.split('_')[0]} end did not count "
                f"(the first: {r.failed[0][1]})"
            )
    return text
