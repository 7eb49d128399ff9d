"""The two sides of `rig compare` (and Robot's `Stage Should Not Regress`): boots from run
folders, soaks, folders of runs or an InfluxDB query, with the warm-up rule applied and
every boot that does not count shown with the reason (docs/compare.md).

A side is one or more *sources*:

| given                          | source                                                  |
|--------------------------------|---------------------------------------------------------|
| a run folder (or report.json)  | that one boot                                           |
| a soak folder or soak id       | its cycle folders, in run-id (= time) order             |
| a folder holding run folders   | those, in run-id order (`results/`, a copied set)       |
| `influx:board=B,variant=V,...` | the boots InfluxDB has for those tags, in time order    |

Warm-up: the first `warmup` boots of every source that is a sequence (a soak, a folder
of runs, a query) are left out, whatever their outcome, and listed: the first boot after
a flash runs with cold caches and first-boot work (generated keys, ldconfig, a journal
created) that later boots do not do. A run folder named on its own is never warm-up: it
was picked. Only boots with outcome `ok` count; the others are listed with theirs. A
boot the report flags as not a true cold boot (`cold_boot.true_cold_boot` false: the
rail was not off long enough, or was back-powered; docs/cold-boot.md) is listed as
excluded with its reason, unless `include_warm` (`rig compare --include-warm`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig.artifacts.rundir import REPORT, RUN, read_report
from rig.errors import ArtifactError, InputError
from rig.model.report import Report
from rig.outcomes import Outcome

TOTAL = "power_to_ui"
INFLUX_PREFIX = "influx:"
JOURNAL = "journal.jsonl"  # a soak folder's (rig.soak.journal)
DEFAULT_CONFIG = Path("config/rig.toml")
#: The default warm-up rule: the first boot of each sequence.
DEFAULT_WARMUP = 1


@dataclass(frozen=True)
class Boot:
    """One boot as the comparison sees it: its durations by stage (and power_to_ui)."""

    id: str
    where: str  # its folder, or "influx"
    outcome: str
    durations: dict[str, float]
    order: tuple[str, ...] = ()  # stage names in boot order
    not_cold: str | None = None  # why it was not a true cold boot, when it was not


@dataclass
class Source:
    spec: str  # as given
    kind: str  # run | soak | runs | influx
    location: str  # resolved folder or the query's selector
    boots: list[Boot] = field(default_factory=list)  # counted
    warmup: list[Boot] = field(default_factory=list)
    excluded: list[tuple[str, str]] = field(default_factory=list)  # (boot id, reason)

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "kind": self.kind,
            "location": self.location,
            "boots": len(self.boots),
            "warmup": [b.id for b in self.warmup],
            "excluded": [{"boot": i, "reason": r} for i, r in self.excluded],
        }


@dataclass
class Side:
    name: str  # "before" | "after"
    sources: list[Source]

    @property
    def boots(self) -> list[Boot]:
        return [b for s in self.sources for b in s.boots]

    def samples(self) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for b in self.boots:
            for name, d in b.durations.items():
                out.setdefault(name, []).append(d)
        return out

    def folders(self) -> list[str]:
        return [s.location for s in self.sources]

    def to_json(self) -> dict[str, Any]:
        return {"boots": len(self.boots), "sources": [s.to_json() for s in self.sources]}


def stage_names(*sides: Side) -> list[str]:
    """Stage names in boot order as the boots give them, power_to_ui last."""
    names: list[str] = []
    for side in sides:
        for b in side.boots:
            names += [n for n in b.order if n not in names]
    return [*names, TOTAL]


def report_boot(report: Report, where: str) -> Boot:
    durations = {s.name: float(s.duration_s) for s in report.stages if s.duration_s is not None}
    if report.power_to_ui_s is not None:
        durations[TOTAL] = float(report.power_to_ui_s)
    order = tuple(s.name for s in report.stages)
    cold = report.cold_boot
    # The reasons' codes (`back_powered`, `short_off`): the report has the figures.
    codes = ", ".join(r.split(":", 1)[0] for r in cold.reasons) if cold else ""
    why = (codes or "flagged") if report.not_cold else None
    return Boot(
        str(report.run_id or Path(where).name), where, report.outcome, durations, order, why
    )


def split(boots: Sequence[Boot], source: Source, warmup: int, include_warm: bool = False) -> Source:
    """Fill `source` from a sequence of boots in time order: warm-up first, then the
    boots that count and those that do not (outcome not ok, nothing measured, not a true
    cold boot unless `include_warm`)."""
    source.warmup = list(boots[:warmup])
    for b in boots[warmup:]:
        if b.outcome != Outcome.OK:
            source.excluded.append((b.id, f"outcome {b.outcome}"))
        elif TOTAL not in b.durations:
            source.excluded.append((b.id, "no power-to-UI"))
        elif b.not_cold is not None and not include_warm:
            source.excluded.append((b.id, f"not a cold boot ({b.not_cold})"))
        else:
            source.boots.append(b)
    return source


def _run_folders(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_dir()
        and not p.name.startswith(".")
        and ((p / REPORT).is_file() or (p / RUN).is_file())
    )


def _sequence(
    spec: str, kind: str, folder: Path, warmup: int, include_warm: bool = False
) -> Source:
    source = Source(spec, kind, str(folder))
    boots: list[Boot] = []
    for run in _run_folders(folder):
        if not (run / REPORT).is_file():
            boots.append(Boot(run.name, str(run), "no_report", {}))  # the rig failed early
            continue
        try:
            boots.append(report_boot(read_report(run / REPORT), str(run)))
        except ArtifactError as e:  # one unreadable cycle must not hide the others
            boots.append(Boot(run.name, str(run), f"unreadable: {e}", {}))
    if not boots:
        what = "soak" if kind == "soak" else "folder"
        raise InputError(f"{spec}: this {what} holds no run folders (report.json or run.json)")
    return split(boots, source, warmup, include_warm)


def load_source(
    spec: str,
    warmup: int,
    config: Path | None,
    query: Callable[[str, Path | None, int, bool], Source] | None = None,
    include_warm: bool = False,
) -> Source:
    """One source from what the user typed (see the module doc); `query` reads an
    `influx:` selector (rig.sinks.influx.select.load_query)."""
    if spec.startswith(INFLUX_PREFIX):
        if query is None:
            from rig.sinks.influx.select import load_query

            query = load_query
        return query(spec, config, warmup, include_warm)
    p = Path(spec)
    if p.is_file() and p.name == REPORT:
        p = p.parent
    if p.is_dir():
        if (p / REPORT).is_file():
            boot = report_boot(read_report(p / REPORT), str(p))
            return split([boot], Source(spec, "run", str(p)), 0, include_warm)
        if (p / JOURNAL).is_file():
            return _sequence(spec, "soak", p.resolve(), warmup, include_warm)
        if (p / RUN).is_file():
            raise InputError(f"{p}: a run folder without {REPORT}: run `rig analyze {p}` first")
        return _sequence(spec, "runs", p, warmup, include_warm)
    if p.exists():
        raise InputError(f"{spec}: not a run folder, soak folder or report.json")
    return _sequence(spec, "soak", _soak_by_id(spec, config), warmup, include_warm)


def _soak_by_id(spec: str, config: Path | None) -> Path:
    """A soak id names `<results_dir>/<id>`, results_dir from the config (as rig soak)."""
    from rig.sinks.influx.settings import load_influx_config

    config = config or DEFAULT_CONFIG
    if re.search(r"[/\\]", spec) or not config.is_file():
        raise InputError(f"{spec}: no such folder")
    results_dir = load_influx_config(config).results_dir  # only [rig].results_dir
    if (results_dir / spec / JOURNAL).is_file():
        return results_dir / spec
    raise InputError(
        f"{spec}: no such folder, and no soak by that id in {results_dir} "
        f"(the results_dir of {config})"
    )


def load_side(
    name: str,
    specs: Sequence[str],
    warmup: int,
    config: Path | None = None,
    include_warm: bool = False,
) -> Side:
    """A side from its specs; InputError (naming the side and what) when it is empty."""
    if not specs:
        raise InputError(f"{name}: nothing given (usage: rig compare BEFORE... -- AFTER...)")
    side = Side(name, [load_source(s, warmup, config, include_warm=include_warm) for s in specs])
    if not side.boots:
        shown = "; ".join(
            f"{s.spec}: {len(s.warmup)} warm-up, {len(s.excluded)} excluded" for s in side.sources
        )
        raise InputError(f"{name}: no boot counts ({shown}); see --warmup and the outcomes")
    return side
