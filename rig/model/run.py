"""A run: what run.json holds (schema bootrig.run/1, docs/contract.md "run.json").

The cycle fills one in as the boot happens and writes it; analysis, the soak and the
sinks read it back with `Run.from_json`. Only rig/artifacts/rundir.py reads or writes
the file itself. The keys are the contract's; the ones this rig does not know are kept
(`extra`) and written back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rig import names
from rig.errors import ArtifactError
from rig.model.codec import JSONObject, dump, load, opt, rest
from rig.outcomes import Outcome


class RunState(StrEnum):
    """Where the rig's own cycle stands (run.json `state`, docs/contract.md "run.json
    state"): the rig says a run is unfinished, nobody infers it from missing keys."""

    RUNNING = "running"  # written before power-on; still there: the rig never finished
    COMPLETE = "complete"  # the cycle ended (whatever the board did)
    INTERRUPTED = "interrupted"  # the operator stopped it (Ctrl-C, SIGTERM)
    FAILED = "failed"  # the rig noted its own failure afterwards (a soak, a resume)


#: The first rig version that writes `state`: a run.json from an earlier rig (its
#: `rig_version` is older) said "unfinished" by lacking `completed_utc` instead.
STATE_SINCE = (0, 2, 0)
_NUMBERS = re.compile(r"[0-9]+(?:\.[0-9]+)*")


@dataclass
class RunCapture:
    """The analyzer's capture as the cycle saw it: the raw layout before power-on, the
    sample count after the stop (`deferred`: capture.bin still waits for conversion)."""

    channels: list[str] | None = opt()
    unitsize: int | None = opt(minimum=1)
    raw_bits: list[int] | None = opt()  # null and absent: one byte as it is
    samples: int | None = opt(minimum=0)
    samplerate_hz: int | None = opt(minimum=1)
    clock: str | None = opt()
    device_stop_s: float | None = opt(minimum=0)
    deferred: bool | None = opt()
    recovered: bool | None = opt()  # converted from a killed run's leftover raw file
    extra: JSONObject = rest()


@dataclass
class RunPlace:
    """The labgrid place the board was (docs/instruments.md "labgrid"): `holder` is who
    held it during the run ("host/user"), `acquired_by_rig` false when the operator had
    acquired it before; `console` and `analyzer` what the rig opened of its resources."""

    name: str
    coordinator: str | None = opt()
    acquired_by_rig: bool | None = opt()
    holder: str | None = opt()
    labgrid: str | None = opt()  # labgrid's version
    power: str | None = opt()  # the power resource: class and name
    console: str | None = opt()  # the pyserial URL of its NetworkSerialPort
    analyzer: str | None = opt()  # the sigrok device of its exported analyzer
    extra: JSONObject = rest()


@dataclass
class RunConsoleReader:
    """The console reader's self-check (rig/instruments/reader_check.py; each key in
    docs/artifacts.md): every read is late by at most `bound_s` (null: no bound) except
    those stamped in a `held` window [from ns, until ns]."""

    scheduling: str  # "SCHED_FIFO" (real-time) or "SCHED_OTHER"
    priority: int
    realtime_error: str | None  # why real-time priority was not obtained
    waits: str  # "select" (own ticks and probes) or "pyserial" (its timeouts only)
    probe_s: float
    bound_s: float | None
    probes: int
    wake_late_us: dict[str, float] | None
    tty_late_us: dict[str, float] | None
    held: list[list[int]]
    extra: JSONObject = rest()


@dataclass
class RunStep:
    """A step of the cycle (rig/steps.py): `start_s` from the power-on command, so the
    off-hold is negative; `depth` 0 is a direct step of the cycle."""

    title: str
    start_s: float
    duration_s: float | None
    depth: int
    extra: JSONObject = rest()


@dataclass
class RunTiming:
    """Where the cycle's wall time went (host clock): the soak's overhead figures."""

    wall_s: float
    off_hold_s: float
    boot_s: float
    overhead_s: float
    hold_work_s: float
    ui_ready_seen_ns: int | None = None
    steps: list[RunStep] | None = opt()
    extra: JSONObject = rest()


@dataclass(kw_only=True)
class Run:
    """One power cycle's record. `power_on_ns` is host CLOCK_MONOTONIC ns of the
    power-on command: t = 0 of a console-only run."""

    schema: str = names.RUN_SCHEMA
    run_id: str
    rig: str | None = None
    board: str
    variant: str | None = None
    started_utc: str | None
    #: The rig's own mark of an unfinished run; absent: complete (a third-party
    #: recorder's folder), unless `unfinished` says otherwise (a legacy rig).
    state: RunState | None = opt()
    host: str | None = opt()
    rig_version: str | None = opt()
    config_file: str | None = opt()
    #: The rig config as it was (secrets redacted): `rig analyze` reads stages, console
    #: and analysis options from it (rig.config.snapshot.analysis_inputs).
    config: JSONObject | None = opt()
    instruments: JSONObject | None = opt()
    place: RunPlace | None = opt()  # the labgrid place, when the target was one
    capture: RunCapture | None = opt()
    analyzer_armed_ns: int | None = opt()
    #: Host ns of the power-off command before the boot (the off-hold's start).
    power_off_ns: int | None = opt()
    #: Host ns of the earlier power-off that left the board off until this cycle (the
    #: previous cycle's `power_off_after` in the same process); null: not known.
    rail_off_since_ns: int | None = opt()
    power_on_ns: int
    power_on_utc: str | None = opt()
    analyzer_stopped_ns: int | None = opt()
    panic_seen_ns: int | None = opt()
    aborted: bool | None = opt()
    console_error: str | None = opt()
    console_reader: RunConsoleReader | None = opt()
    power_artifacts_error: str | None = opt()
    disk_errors: list[str] | None = opt()
    #: The rig's own verdict when it, not the board, failed: an Outcome value
    #: (`rig_error`, `analyzer_error`, `interrupted`), with what failed.
    rig_error: str | None = opt()
    rig_error_detail: str | None = opt()
    analyzer_error: str | None = opt()
    timing: RunTiming | None = opt()
    completed_utc: str | None = opt()
    extra: JSONObject = rest()

    @classmethod
    def from_json(cls, obj: Any) -> Run:
        """ArtifactError names the key that does not fit."""
        schema = obj.get("schema") if isinstance(obj, dict) else None
        if schema != names.RUN_SCHEMA:
            raise ArtifactError(f"key 'schema': expected {names.RUN_SCHEMA!r}, found {schema!r}")
        return load(cls, obj)

    def to_json(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def bare(cls, run_id: str) -> Run:
        """The stand-in for a capture analyzed with no run.json: no config, t = 0 at
        the power edge; `is_bare` tells it from a run the rig started."""
        return cls(schema="", run_id=run_id, board="unknown", power_on_ns=0, started_utc=None)

    @property
    def is_bare(self) -> bool:
        return self.schema == ""

    @property
    def unfinished(self) -> bool:
        """The rig started this cycle and did not end it: `state` still "running", or a
        folder of a rig before `state` existed that never wrote `completed_utc`."""
        if self.state is not None:
            return self.state is RunState.RUNNING
        return self.legacy and not self.completed_utc and not self.aborted

    @property
    def interrupted(self) -> bool:
        """The operator stopped the run (Ctrl-C, SIGTERM): not a measurement of the boot."""
        return bool(self.aborted) or self.state is RunState.INTERRUPTED

    @property
    def legacy(self) -> bool:
        """Written by a rig older than `state` (STATE_SINCE), told apart by its
        `rig_version`: a key only the rig writes, so a third-party folder is never legacy."""
        if self.rig_version is None:
            return False
        return _version(self.rig_version) < STATE_SINCE

    def disk_error(self, what: str) -> None:
        """The disk failed the rig (full, a quota): the run is the rig's failure, and
        says what it kept."""
        if self.disk_errors is None:
            self.disk_errors = []
        self.disk_errors.append(what)
        if self.rig_error is None:
            self.rig_error = Outcome.RIG_ERROR.value
            self.rig_error_detail = f"disk: {what}"


def _version(text: str) -> tuple[int, ...]:
    """ "0.1.0" -> (0, 1, 0); a part that is not a number ends it ("0.2.0.dev1" -> 0.2.0)."""
    m = _NUMBERS.match(text)
    return tuple(int(x) for x in m.group(0).split(".")) if m else ()
