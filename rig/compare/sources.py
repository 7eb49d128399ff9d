"""What the user names as a side of `rig compare` (a run folder, a soak folder or id, a
folder of runs, an `influx:` query), read into sources (docs/compare.md, "Inputs")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from rig.artifacts.rundir import REPORT, RUN, read_report
from rig.compare.inputs import Boot, Side, Source, report_boot, split
from rig.config.influx import load_influx_config
from rig.errors import ArtifactError, InputError
from rig.names import DEFAULT_CONFIG, JOURNAL

INFLUX_PREFIX = "influx:"


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
    include_warm: bool = False,
) -> Source:
    """One source from what the user typed."""
    if spec.startswith(INFLUX_PREFIX):
        # Here: comparing folders needs no HTTP client (`rig compare --help` neither).
        from rig.sinks.influx.select import load_query

        return load_query(spec, config, warmup, include_warm)
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
