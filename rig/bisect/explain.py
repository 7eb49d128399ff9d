"""The change point a bisect explains (`--explain TREND_JSON`), the commits the nightly ran
on each side of it (`--nights DIR`, from each night's status.json), and the annotation
that puts the answer beside it on the dashboard (`--mark`). docs/bisect.md, "Nightly"."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rig.config.influx import InfluxSettings, load_influx_config
from rig.errors import InputError
from rig.sinks.influx.bisects import BisectMark, write_mark
from rig.sinks.influx.client import Client
from rig.untrusted import read_json_file

#: A trend document or a night's status is small; anything bigger is not one.
MAX_JSON_BYTES = 16 << 20
STATUS = "status.json"
STAMP = "%Y%m%dT%H%M%SZ"


@dataclass(frozen=True)
class Regression:
    """A new slower change point of `rig trend`, as its JSON names it."""

    board: str
    variant: str
    stage: str
    rig: str
    run_id: str  # the first boot after it
    time_ns: int  # that boot's power-on time
    shift_s: float


def _get(doc: dict[str, Any], key: str, where: str, kind: Any = str, what: str = "a string") -> Any:
    value = doc.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(f"{where}: key '{key}': expected {what}, found {value!r}")
    return value


def read_regression(path: Path) -> Regression:
    """The first new regression in a `rig trend --fail-on-new --json` document."""
    doc = read_json_file(path, MAX_JSON_BYTES, InputError)
    news = doc.get("new_regressions") if isinstance(doc, dict) else None
    if not isinstance(news, list):
        raise InputError(
            f"--explain {path}: key 'new_regressions': missing (not the output of "
            "`rig trend --fail-on-new --json`)"
        )
    if not news:
        raise InputError(f"--explain {path}: key 'new_regressions': empty, nothing to explain")
    first = news[0]
    where = f"--explain {path}: new_regressions[0]"
    if not isinstance(first, dict):
        raise InputError(f"{where}: expected an object, found {first!r}")
    time_ns = _get(first, "time_ns", where, int, "an integer")
    shift = _get(first, "shift_s", where, int | float, "a number")
    first = {**first, "variant": first.get("variant") or ""}
    variant, board, stage, rig, run_id = (
        _get(first, key, where) for key in ("variant", "board", "stage", "rig", "run_id")
    )
    return Regression(board, variant, stage, rig, run_id, time_ns, float(shift))


def _nights(folder: Path) -> list[tuple[int, str, str]]:
    """(start ns, stamp, commit) of every night in `folder` that recorded a commit."""
    if not folder.is_dir():
        raise InputError(f"--nights {folder}: not a folder")
    out = []
    for night in folder.iterdir():
        try:
            start = datetime.strptime(night.name, STAMP).replace(tzinfo=UTC)
        except ValueError:
            continue  # `latest` and anything else that is not a night
        status = night / STATUS
        if night.is_symlink() or not status.is_file():
            continue
        doc = read_json_file(status, MAX_JSON_BYTES, InputError)
        commit = doc.get("commit") if isinstance(doc, dict) else None
        if isinstance(commit, str) and commit:
            out.append((int(start.timestamp()) * 1_000_000_000, night.name, commit))
    return sorted(out)


def night_ends(folder: Path, at_ns: int) -> tuple[str, str]:
    """(good, bad): the commits of the night before the change point's night, and of it."""
    nights = _nights(folder)
    before = [n for n in nights if n[0] <= at_ns]
    if not before:
        raise InputError(
            f"--nights {folder}: no night with a commit started before the change point "
            f"({_utc(at_ns)}): the nightly records it with BOOTRIG_BISECT_REPO set"
        )
    bad = before[-1]
    if len(before) < 2:
        raise InputError(
            f"--nights {folder}: no night with a commit before {bad[1]}, the change point's "
            "night: nothing known good"
        )
    return before[-2][2], bad[2]


def _utc(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime(STAMP)


def influx_settings(config: Path) -> InfluxSettings:
    """The [influx] table `--mark` writes to, checked before the search starts."""
    settings = load_influx_config(config).settings
    if settings is None:
        raise InputError(f"--mark: {config} has no [influx] table to write the annotation to")
    return settings


def mark(doc: dict[str, Any], r: Regression, settings: InfluxSettings) -> BisectMark:
    """Write a finished bisect's answer (bisect.json's `doc`) beside the change point."""
    if doc["first_bad"]:
        commits = ((doc["first_bad"]["commit"], doc["first_bad"]["subject"]),)
    else:
        commits = tuple((c["commit"], c["subject"]) for c in doc["candidates"])
    d = doc["difference"] or {}
    m = BisectMark(
        r.board, r.variant, r.stage, r.rig, r.time_ns, r.run_id, doc["status"], commits,
        doc["good"]["commit"], doc["bad"]["commit"], doc["folder"], d.get("difference_s"),
        d.get("ci_low_s"), d.get("ci_high_s"), doc["refused"] or "",
    )  # fmt: skip
    with Client(settings) as client:
        write_mark(client, m)
    return m
