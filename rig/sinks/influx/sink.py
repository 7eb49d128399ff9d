"""Boot reports in bulk: `push` backfills artifact folders, `status` answers
`rig influx status`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig.artifacts.rundir import REPORT, read_report
from rig.config.influx import InfluxSettings
from rig.errors import ArtifactError
from rig.sinks.influx.batch import batches, write_split
from rig.sinks.influx.client import Client, InfluxError
from rig.sinks.influx.points import report_lines
from rig.sinks.influx.spool import Spool, spool_dir


def report_files(targets: Iterable[Path]) -> list[Path]:
    """report.json files of run folders, of a results folder's runs, or given directly."""
    out: list[Path] = []
    for t in map(Path, targets):
        if t.is_file():
            out.append(t)
        elif (t / REPORT).is_file():
            out.append(t / REPORT)
        elif t.is_dir():
            found = sorted(
                p / REPORT
                for p in t.iterdir()
                if p.is_dir() and not p.name.startswith(".") and (p / REPORT).is_file()
            )
            if not found:
                raise ArtifactError(f"{t}: no report.json here or in its run folders")
            out += found
        else:
            raise ArtifactError(f"{t}: no such folder")
    return out


@dataclass
class PushResult:
    reports: int = 0
    points: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None


def push(files: list[Path], settings: InfluxSettings) -> PushResult:
    """Backfill reports (no spool: the folders are the durable copy). Idempotent."""
    res = PushResult()

    def converted() -> Iterator[tuple[Path, list[str]]]:
        for f in files:
            try:
                lines = report_lines(read_report(f), settings.precision)
            except (ArtifactError, KeyError, TypeError) as e:
                res.failed.append({"file": str(f), "reason": str(e)})
                continue
            yield f, lines

    try:
        with Client(settings) as client:
            for batch in batches(converted(), lambda r: len(r[1]), settings.batch_points):
                for done, err in write_split(client, batch, lambda r: "\n".join(r[1]).encode()):
                    if err is not None:
                        res.failed.append({"file": str(done[0][0]), "reason": str(err)})
                        continue
                    res.reports += len(done)
                    res.points += sum(len(lines) for _, lines in done)
    except InfluxError as e:
        res.error = str(e)
    return res


def status(settings: InfluxSettings, results_dir: Path) -> dict[str, Any]:
    """Server, database and spool depth, for `rig influx status`."""
    out: dict[str, Any] = {
        "url": settings.url,
        "database": settings.database,
        "retention_policy": settings.retention_policy or None,
        "reachable": False,
        "version": None,
        "database_exists": None,
        "boots": None,
        "error": None,
    }
    try:
        with Client(settings) as client:
            out["version"] = client.ping()
            out["reachable"] = True
            dbs = client.query("SHOW DATABASES")
            names = [v[0] for s in dbs[0].get("series", []) for v in s.get("values", [])]
            out["database_exists"] = settings.database in names
            if out["database_exists"]:
                r = client.query('SELECT count("run_id") FROM "boot"', settings.database)
                series = r[0].get("series") if r else None
                out["boots"] = int(series[0]["values"][0][1]) if series else 0
    except InfluxError as e:
        out["error"] = str(e)
    out["spool"] = Spool(spool_dir(results_dir)).depth()
    return out
