"""Deliver boot reports: write now, or spool durably and drain the spool later.

`deliver` is what `rig run` calls; `replay` drains the spool (after every successful
write and from `rig influx replay`); `push` backfills artifact folders.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rig.artifacts.rundir import REPORT, ArtifactError, read_json, utc_now
from rig.sinks.influx.client import Client, InfluxError
from rig.sinks.influx.points import ReportError, point_time_ns, report_lines
from rig.sinks.influx.settings import InfluxSettings
from rig.sinks.influx.spool import Entry, Spool, spool_dir


@dataclass
class ReplayResult:
    reports: int = 0
    points: int = 0
    left: int = 0
    rejected: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None
    busy: bool = False  # another process holds the spool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Delivery:
    status: str  # "written" | "spooled"
    run_id: str | None
    points: int
    reason: str | None = None
    spool_file: str | None = None
    replay: ReplayResult | None = None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["replay"] = self.replay.as_dict() if self.replay else None
        return d

    def describe(self) -> str:
        if self.status == "written":
            text = f"influx: {self.points} points written"
            if self.replay and self.replay.reports:
                text += f", {self.replay.reports} spooled boot(s) replayed"
            return text
        return f"influx: not written ({self.reason}); spooled to {self.spool_file}"


def _write_batch(client: Client, spool: Spool, batch: list[Entry], res: ReplayResult) -> None:
    """Write entries as one request; isolate a rejected entry by writing them one by one.

    Raises InfluxError when the server is away or refuses us (the replay stops, nothing
    is lost).
    """
    if not batch:
        return
    precision = str(batch[0].header.get("precision", "ns"))
    try:
        client.write(b"\n".join(e.body for e in batch), precision)
    except InfluxError as e:
        if not e.data_rejected:
            raise
        if len(batch) > 1:
            for entry in batch:
                _write_batch(client, spool, [entry], res)
            return
        spool.mark_failed(batch[0], str(e), e.kind, utc_now())
        res.rejected.append({"file": batch[0].path.name, "reason": str(e)})
        return
    for entry in batch:
        spool.remove(entry)
        res.reports += 1
        res.points += entry.points


def replay(client: Client, spool: Spool, batch_points: int) -> ReplayResult:
    """Send every spooled boot in time order; each file goes only once acknowledged."""
    res = ReplayResult()
    with spool.draining() as mine:
        if not mine:
            res.busy = True
            return res
        batch: list[Entry] = []
        size = 0
        try:
            for path in spool.paths():
                try:
                    entry = spool.read(path)
                except FileNotFoundError:
                    continue  # drained meanwhile by a write that was already in flight
                except (OSError, ValueError) as e:
                    res.rejected.append({"file": path.name, "reason": str(e)})
                    continue
                if batch and entry.header.get("precision") != batch[0].header.get("precision"):
                    _write_batch(client, spool, batch, res)
                    batch, size = [], 0
                batch.append(entry)
                size += entry.points
                if size >= batch_points:
                    _write_batch(client, spool, batch, res)
                    batch, size = [], 0
            _write_batch(client, spool, batch, res)
        except InfluxError as e:
            res.error = str(e)
    res.left = len(spool.paths())
    return res


def deliver(report: dict[str, Any], settings: InfluxSettings, results_dir: Path) -> Delivery:
    """Write one report; if the server is down, slow or says no, spool it (fsynced).

    Raises ReportError only for a report that can never be written (no start time).
    """
    lines = report_lines(report, settings.precision)
    run_id = report.get("run_id")
    spool = Spool(spool_dir(results_dir))
    try:
        with Client(settings) as client:
            client.write(lines)
            drained = None
            if spool.paths():
                try:
                    drained = replay(client, spool, settings.batch_points)
                except OSError as err:  # this boot is written; the spool waits for `replay`
                    drained = ReplayResult(error=f"spool: {err}")
        return Delivery("written", run_id, len(lines), replay=drained)
    except InfluxError as e:
        t_ns = point_time_ns(report)
        meta = {
            "precision": settings.precision,
            "reason": str(e),
            "kind": e.kind,
            "spooled_utc": utc_now(),
        }
        path = spool.put(t_ns, run_id, lines, meta)
        return Delivery("spooled", run_id, len(lines), str(e), str(path))


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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _push_batch(client: Client, batch: list[tuple[Path, list[str]]], res: PushResult) -> None:
    if not batch:
        return
    try:
        client.write([line for _, lines in batch for line in lines])
    except InfluxError as e:
        if not e.data_rejected:
            raise
        if len(batch) > 1:  # find the report the server refuses, write the others
            for item in batch:
                _push_batch(client, [item], res)
            return
        res.failed.append({"file": str(batch[0][0]), "reason": str(e)})
        return
    res.reports += len(batch)
    res.points += sum(len(lines) for _, lines in batch)


def push(files: list[Path], settings: InfluxSettings) -> PushResult:
    """Backfill reports (no spool: the folders are the durable copy). Idempotent."""
    res = PushResult()
    batch: list[tuple[Path, list[str]]] = []
    size = 0
    try:
        with Client(settings) as client:
            for f in files:
                try:
                    lines = report_lines(read_json(f), settings.precision)
                except (ArtifactError, ReportError, KeyError, TypeError) as e:
                    res.failed.append({"file": str(f), "reason": str(e)})
                    continue
                batch.append((f, lines))
                size += len(lines)
                if size >= settings.batch_points:
                    _push_batch(client, batch, res)
                    batch, size = [], 0
            _push_batch(client, batch, res)
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
