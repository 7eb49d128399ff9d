"""`rig cost`'s run: interleaved boots with the instrumentation on and off, each variant
(the rig config with `--set` overrides) on a bench of its own, both open at once where
each is a process of its own (docs/cost.md). The boots land in
`<results_dir>/cost-<id>/` (`on-0001`, `off-0001`, `warmup-on-1`, ...) with `cost.json`.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig.analysis.choices import OFF, ON, VARIANTS
from rig.artifacts import rundir
from rig.compare.inputs import Boot, Side, Source, report_boot, split
from rig.config.load import RigConfig
from rig.errors import ConfigError, InputError
from rig.instruments.drivers import load_config
from rig.instruments.setup import Bench, Instruments
from rig.measure.cycle import run_cycle
from rig.measure.pipeline import analyze_folder
from rig.measure.session import reseeded
from rig.sinks.files import save_report
from rig.untrusted import parse_toml

PREFIX = "cost-"
RESULT = "cost.json"
_KEY = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*\s*")
_SYNTAX = "expected on:KEY=VALUE[,KEY=VALUE...] or off:... (off: alone: the config as it is)"


@dataclass(frozen=True)
class Variant:
    name: str  # "on" | "off"
    overrides: tuple[str, ...]  # KEY=VALUE, as `rig run --set` takes them
    given: str  # as typed

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "overrides": list(self.overrides), "given": self.given}


def _toml_value(text: str) -> bool:
    try:
        parse_toml(f"v = {text}")
    except ValueError:  # TOMLDecodeError, or too deep (rig.untrusted)
        return False
    return True


def _items(rest: str) -> list[str]:
    """KEY=VALUE items split at the commas that are not inside a TOML value
    (`qemu.kernel_args="a,b",sim.quiet=true` is two items)."""
    items: list[str] = []
    cur: str | None = None
    for part in rest.split(","):
        cur = part if cur is None else f"{cur},{part}"
        if _toml_value(cur.partition("=")[2]):
            items.append(cur.strip())
            cur = None
    return [*items, cur.strip()] if cur is not None else items


def parse_variant(text: str) -> Variant:
    name, sep, rest = text.partition(":")
    if not sep or name.strip() not in VARIANTS:
        raise InputError(f"--variant {text!r}: {_SYNTAX}")
    items = _items(rest) if rest.strip() else []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not _KEY.fullmatch(key) or not _toml_value(value):
            raise InputError(
                f"--variant {text!r}: {item!r} is not KEY=VALUE with a TOML value (quote "
                f"strings: qemu.kernel_args='\"quiet\"'); {_SYNTAX}"
            )
    return Variant(name.strip(), tuple(items), text)


def parse_variants(texts: Sequence[str]) -> dict[str, Variant]:
    """Exactly one `on` and one `off` variant."""
    out: dict[str, Variant] = {}
    for text in texts:
        v = parse_variant(text)
        if v.name in out:
            raise InputError(f"--variant {text!r}: variant '{v.name}' given twice")
        out[v.name] = v
    missing = [n for n in VARIANTS if n not in out]
    if missing:
        raise InputError(f"--variant: no '{missing[0]}' variant given; {_SYNTAX}")
    return out


def variant_configs(
    path: Path, variants: Mapping[str, Variant], common: Sequence[str] = ()
) -> dict[str, RigConfig]:
    """Each variant's config: `common` overrides (`rig cost --set`), then its own. On the
    simulator `on` boots from seed + 1 (unless it sets sim.seed): two simulators with one
    seed would repeat each other's variance boot for boot."""
    cfgs: dict[str, RigConfig] = {}
    for name, v in variants.items():
        try:
            cfg = load_config(path, overrides=[*common, *v.overrides])
        except ConfigError as e:
            raise ConfigError(f"--variant {v.given!r}: {e}") from None
        cfgs[name] = seeded_apart(cfg, v.overrides) if name == ON else cfg
    dirs = {c.results_dir.resolve() for c in cfgs.values()}
    if len(dirs) != 1:
        raise InputError("--variant: both variants must write to one rig.results_dir")
    return cfgs


def seeded_apart(cfg: RigConfig, overrides: Sequence[str]) -> RigConfig:
    """`cfg` booting from seed + 1 on the simulator, unless `overrides` set sim.seed: two
    simulators with one seed would repeat each other's variance boot for boot."""
    own_seed = any(o.partition("=")[0].strip() == "sim.seed" for o in overrides)
    return cfg if own_seed else reseeded(cfg, 1)


def concurrent(cfgs: Mapping[str, RigConfig]) -> bool:
    """Can both variants' benches be open at once (each its own emulated board)?"""
    return all(c.sim is not None or c.qemu is not None for c in cfgs.values())


#: A block of consecutive boots of one variant runs inside `side(variant, bench)`: what
#: changes the board itself between the sides (`rig try`'s U-Boot console path).
SideHook = Callable[[str, Bench], AbstractContextManager[object]]


class Benches(AbstractContextManager["Benches"]):
    """One bench of instruments per variant: both open at once where `concurrent`;
    `shared`: one bench, the board, for both (the variants differ in what a side hook
    changes on it, not in the config)."""

    def __init__(self, cfgs: Mapping[str, RigConfig], shared: bool = False) -> None:
        self.cfgs = cfgs
        self.shared = shared
        self.concurrent = concurrent(cfgs) and not shared
        self._open: dict[str, tuple[Instruments, Bench]] = {}
        self.starts: list[dict[str, Any]] = []  # {"variant", "s"}: every bench start

    def get(self, name: str) -> Bench:
        if self.shared:
            name = OFF
        if name in self._open:
            return self._open[name][1]
        if not self.concurrent:
            self._close_all()
        t0 = time.monotonic()
        inst = Instruments(self.cfgs[name])
        bench = inst.__enter__()
        self._open[name] = (inst, bench)
        self.starts.append({"variant": name, "s": round(time.monotonic() - t0, 3)})
        return bench

    def _close_all(self) -> None:
        while self._open:
            _, (inst, _bench) = self._open.popitem()
            inst.__exit__(None, None, None)

    def __exit__(self, *exc: object) -> None:
        self._close_all()


@dataclass
class BootDone:
    variant: str
    run_id: str
    counted: bool  # False: a warm-up boot
    outcome: str


@dataclass
class CostRun:
    folder: Path
    boots: list[BootDone] = field(default_factory=list)
    sides: dict[str, Side] = field(default_factory=dict)
    interrupted: bool = False
    bench_starts: list[dict[str, Any]] = field(default_factory=list)
    concurrent: bool = True
    wall_s: float = 0.0

    def outcomes(self, variant: str) -> list[str]:
        """The outcomes of `variant`'s boots that count (warm-up boots left out)."""
        return [b.outcome for b in self.boots if b.variant == variant and b.counted]


def run_cost(
    cfgs: Mapping[str, RigConfig],
    order: Sequence[str],
    warmup: int,
    engine: str,
    stop: threading.Event,
    progress: Callable[[str], None] = lambda _: None,
    side: SideHook | None = None,
) -> CostRun:
    """Boot the schedule (`warmup` boots of each variant first, uncounted), analyze every
    boot (while the next one is held unpowered) and collect both sides. With `side`, both
    variants boot one bench, each run of one variant's boots inside `side(variant, bench)`
    (entered again only where the variant changes)."""
    _, folder = rundir.new_run_folder(next(iter(cfgs.values())).results_dir, prefix=PREFIX)
    result = CostRun(folder)
    plan = [(v, False, f"warmup-{v}-{i + 1}") for i in range(warmup) for v in (ON, OFF)]
    counts = dict.fromkeys(VARIANTS, 0)
    for v in order:
        counts[v] += 1
        plan.append((v, True, f"{v}-{counts[v]:04d}"))
    boots: dict[str, list[Boot]] = {v: [] for v in VARIANTS}
    pending: list[tuple[BootDone, Path]] = []

    def analyze_pending() -> None:  # runs while the next boot is held unpowered
        while pending:
            done, where = pending.pop()
            report = analyze_folder(where, engine=engine)
            save_report(where, report, html=False)
            done.outcome = report.outcome
            boots[done.variant].append(report_boot(report, str(where)))

    t0 = time.monotonic()
    # The side blocks end (e.g. the environment restored) before the benches close.
    with Benches(cfgs, shared=side is not None) as benches, ExitStack() as block:
        result.concurrent = benches.concurrent
        current: str | None = None
        for k, (variant, counted, run_id) in enumerate(plan):
            if stop.is_set():
                result.interrupted = True
                break
            progress(f"boot {k + 1}/{len(plan)}: {run_id}")
            cfg = dataclasses.replace(cfgs[variant], results_dir=folder)
            bench = benches.get(variant)
            if side is not None and variant != current:
                block.close()
                current = None
                if stop.is_set():
                    result.interrupted = True
                    break
                block.enter_context(side(variant, bench))
                current = variant
                if stop.is_set():  # stopped while the side was being set
                    result.interrupted = True
                    break
            cycle = run_cycle(cfg, bench, run_id=run_id, during_hold=analyze_pending, abort=stop)
            done = BootDone(variant, run_id, counted, "pending")
            result.boots.append(done)
            if cycle.run.aborted:
                done.outcome = "interrupted"
                result.interrupted = True
                break
            pending.append((done, cycle.folder))
        block.close()
        result.bench_starts = benches.starts
    analyze_pending()
    result.wall_s = time.monotonic() - t0
    for v in VARIANTS:
        src = Source(spec=v, kind="cost", location=str(folder))
        warm = sum(1 for b in result.boots if b.variant == v and not b.counted)
        result.sides[v] = Side(v, [split(boots[v], src, warm)])
    return result
