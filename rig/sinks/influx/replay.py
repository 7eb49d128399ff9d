"""Drain the outage spool after every successful write and for `rig influx replay`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from rig.artifacts.rundir import utc_now
from rig.sinks.influx.batch import batches, write_split
from rig.sinks.influx.client import Client, InfluxError
from rig.sinks.influx.spool import Entry, Spool


@dataclass
class ReplayResult:
    reports: int = 0
    points: int = 0
    left: int = 0
    rejected: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None
    busy: bool = False  # another process holds the spool


def _entries(spool: Spool, res: ReplayResult) -> Iterator[Entry]:
    for path in spool.paths():
        try:
            entry = spool.read(path)
        except FileNotFoundError:
            continue  # drained meanwhile by a write that was already in flight
        except (OSError, ValueError) as e:
            res.rejected.append({"file": path.name, "reason": str(e)})
            continue
        yield entry


def replay(client: Client, spool: Spool, batch_points: int) -> ReplayResult:
    """Send every spooled boot in time order; each file goes only once acknowledged. A
    rejected boot stays, marked with the server's reason; the server going away stops
    the replay (`error`)."""
    res = ReplayResult()
    with spool.draining() as mine:
        if not mine:
            res.busy = True
            return res
        entries = _entries(spool, res)
        try:
            for batch in batches(
                entries, lambda e: e.points, batch_points, key=lambda e: e.header.get("precision")
            ):
                precision = str(batch[0].header.get("precision", "ns"))
                for done, err in write_split(client, batch, lambda e: e.body, precision):
                    if err is not None:
                        spool.mark_failed(done[0], str(err), err.kind, utc_now())
                        res.rejected.append({"file": done[0].path.name, "reason": str(err)})
                        continue
                    for entry in done:
                        spool.remove(entry)
                        res.reports += 1
                        res.points += entry.points
        except InfluxError as e:
            res.error = str(e)
    res.left = len(spool.paths())
    return res
