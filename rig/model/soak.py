"""The soak journal's records: what each line of journal.jsonl holds (docs/soak.md).

A line is one JSON object whose `type` chooses its record class (`record_from_json`); a
`type` this rig does not know is kept whole (`OtherRecord`), so a journal a newer rig
extended still reads.

docs/soak.md is a contract for outside tools, so `dump(record)` gives back the line the
rig wrote, key for key: a key the writer always writes, null or not, is a plain field
(absent in a hand-written or older line, it reads as its default); a key written only
when there is something to say (`detail`, `recovered`) is `opt()`; keys this rig does
not know stay in `extra`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rig.errors import ArtifactError
from rig.model.codec import JSONObject, load, num, opt, rest

HEADER, CYCLE, INTERRUPTED, RESUME, END = "header", "cycle", "interrupted", "resume", "end"


@dataclass(kw_only=True)
class HeaderRecord:
    """Line 1: what the soak is (rig.soak.start.header). `config_sha256` and
    `board_profile_sha256` are missing from journals older than `--resume` without
    `--config` (rig.soak.resume checks those against run.json instead)."""

    type: str = HEADER
    schema: str
    soak_id: str | None = opt()
    config: str | None = opt()
    config_sha256: str | None = opt()
    board_profile_sha256: str | None = None  # null: a real board, no profile
    board_profile: str | None = None
    rig: str | None = opt()
    board: str | None = opt()
    variant: str | None = opt()
    stages: list[str] | None = opt()  # the config's stage names, in order
    cycles: int | None = None  # the limits: either may be null
    duration_s: float | None = None
    max_failure_rate: float | None = opt(minimum=0)
    seed: int | None = None  # the simulated board's; null on a real board
    place: str | None = opt()  # the labgrid place booted (`--place`); resumed with it
    host: str | None = opt()
    rig_version: str | None = opt()
    started_utc: str | None = opt()
    utc: str | None = opt()
    extra: JSONObject = rest()


@dataclass(kw_only=True)
class CycleRecord:
    """One power cycle (rig.soak.record.finish; `elapsed_s` added when journaled).
    `stages` maps each stage the report has to its duration; `influx` is `written`,
    `spooled`, `off`, `none` or `failed: ...`; a null means the rig had nothing to say
    (no report, no run.json, not on Linux)."""

    type: str = CYCLE
    cycle: int = num(minimum=1)
    run_id: str
    session: int | None = opt(minimum=1)  # always written; 1 when absent
    t_ns: int | None = None  # monotonic clock at the cycle's start; null when recovered
    outcome: str
    power_to_ui_s: float | None = None
    stages: dict[str, float | None]
    influx: str | None = opt()
    wall_s: float | None = None
    off_hold_s: float | None = None
    boot_s: float | None = None
    overhead_s: float | None = None
    hold_work_s: float | None = None
    detail: str | None = opt()  # why the rig failed (rig_error) or what resume found
    #: The report's cold_boot.true_cold_boot (absent: the report could not tell) and,
    #: when false, its reasons: a flagged boot stays out of the stage statistics.
    cold_boot: bool | None = opt()
    not_cold: list[str] | None = opt()
    recovered: bool | None = opt()  # true: journaled on resume
    rss_kb: int | None = None
    utc: str | None = opt()
    elapsed_s: float | None = opt(minimum=0)
    extra: JSONObject = rest()


@dataclass(kw_only=True)
class InterruptedRecord:
    """A cycle Ctrl-C or SIGTERM cut short: not a measurement, but its number is used."""

    type: str = INTERRUPTED
    cycle: int = num(minimum=1)
    run_id: str
    utc: str | None = opt()
    extra: JSONObject = rest()


@dataclass(kw_only=True)
class ResumeRecord:
    """A new session: torn bytes cut on reopening, cycle folders it found unjournaled."""

    type: str = RESUME
    session: int = num(minimum=1)
    cut_bytes: int | None = opt(minimum=0)
    unjournaled: list[str] | None = opt()
    utc: str | None = opt()
    extra: JSONObject = rest()


@dataclass(kw_only=True)
class EndRecord:
    """A session's end; a soak that raised writes only `reason` and `utc`."""

    type: str = END
    reason: str  # completed | interrupted | aborted
    session: int | None = opt(minimum=1)
    elapsed_s: float | None = opt(minimum=0)
    utc: str | None = opt()
    extra: JSONObject = rest()


@dataclass(kw_only=True)
class OtherRecord:
    """A line of a kind this rig does not know: carried as it is."""

    type: str
    extra: JSONObject = rest()


Record = HeaderRecord | CycleRecord | InterruptedRecord | ResumeRecord | EndRecord | OtherRecord

KINDS: dict[str, type[Any]] = {
    k.type: k for k in (HeaderRecord, CycleRecord, InterruptedRecord, ResumeRecord, EndRecord)
}


def record_from_json(obj: Any, where: str = "") -> Record:
    """A journal line's object as its record class, chosen by `type`; ArtifactError names
    the key that does not fit."""
    if not isinstance(obj, dict):
        raise ArtifactError("expected a JSON object with a 'type'")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ArtifactError(f"missing key {f'{where}.type' if where else 'type'!r}")
    record: Record = load(KINDS.get(kind, OtherRecord), obj, where)
    return record
