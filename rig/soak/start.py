"""Start a new soak or pick up an old one: its folder, its journal header, its state
(the folder's layout: docs/soak.md, "What a soak writes")."""

from __future__ import annotations

import hashlib
import re
import socket
from dataclasses import dataclass
from pathlib import Path

from rig import __version__
from rig.artifacts import rundir
from rig.config.load import RigConfig
from rig.errors import ArtifactError, InputError
from rig.model.soak import (
    CycleRecord,
    EndRecord,
    HeaderRecord,
    InterruptedRecord,
    Record,
    ResumeRecord,
)
from rig.model.summary import Limits
from rig.names import JOURNAL
from rig.soak.journal import SCHEMA, Journal
from rig.soak.runner import SoakState

PREFIX = "soak-"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_DURATION = re.compile(r"(\d+(?:\.\d*)?)(ms|s|m|h|d)?", re.IGNORECASE)
_UNIT_S = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str, *, zero: bool = False) -> float:
    """ "90", "90s", "30m", "8h", "1h30m", "2d" -> seconds (> 0, or >= 0 with `zero`)."""
    s = "".join(text.split())
    pos, total = 0, 0.0
    while pos < len(s):
        m = _DURATION.match(s, pos)
        if not m or m.end() == pos:
            break
        total += float(m.group(1)) * _UNIT_S[(m.group(2) or "s").lower()]
        pos = m.end()
    if not s or pos != len(s) or (total == 0 and not zero):
        raise InputError(f"duration {text!r}: expected e.g. 90s, 30m, 8h or 1h30m")
    return total


def new_soak_id() -> str:
    return PREFIX + rundir.new_run_id()


def check_id(soak_id: str) -> str:
    if not _ID.match(soak_id) or soak_id in (".", ".."):
        raise InputError(f"soak id {soak_id!r}: letters, digits, '.', '_' and '-' only")
    return soak_id


def find_folder(results_dir: Path, ref: str) -> Path:
    """A soak by id (under `results_dir`) or by the path of its folder or journal."""
    p = Path(ref)
    candidates = [p.parent if p.name == JOURNAL else p, results_dir / ref]
    if not p.is_absolute() and len(p.parts) == 1:
        candidates.reverse()  # a bare name is an id first
    for c in candidates:
        if (c / JOURNAL).is_file():
            return c.resolve()
    raise ArtifactError(f"no soak {ref!r}: no {JOURNAL} in {' or '.join(map(str, candidates))}")


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fingerprints(cfg: RigConfig) -> dict[str, str | None]:
    """What the header keeps to tell, on --resume, whether the config is still the same."""
    profile = cfg.sim.profile if cfg.sim else None
    return {
        "config_sha256": file_sha256(cfg.path),
        "board_profile_sha256": file_sha256(profile) if profile else None,
    }


def header(
    cfg: RigConfig, soak_id: str, limits: Limits, board: Path | None, max_failure_rate: float
) -> HeaderRecord:
    return HeaderRecord(
        schema=SCHEMA,
        soak_id=soak_id,
        config=str(cfg.path.resolve()),
        **fingerprints(cfg),
        board_profile=str(board.resolve()) if board else None,
        rig=cfg.rig,
        board=cfg.board,
        variant=cfg.variant,
        stages=[s.name for s in cfg.stages],
        cycles=limits.cycles,
        duration_s=limits.duration_s,
        max_failure_rate=max_failure_rate,
        seed=cfg.sim.seed if cfg.sim else None,
        place=cfg.target.place if cfg.target else None,
        host=socket.gethostname(),
        rig_version=__version__,
        started_utc=rundir.utc_now(),
        utc=rundir.utc_now(),
    )


@dataclass
class Opened:
    folder: Path
    journal: Journal
    records: list[Record]  # every journal line so far, header first
    state: SoakState
    cut_bytes: int = 0  # a torn last line removed on reopening

    @property
    def header(self) -> HeaderRecord:
        head = self.records[0]
        assert isinstance(head, HeaderRecord)  # rig.soak.journal reads no other first line
        return head


def begin(folder: Path, head: HeaderRecord) -> Opened:
    if folder.exists():
        raise ArtifactError(f"{folder}: a soak with this id exists (use --resume)")
    journal = Journal.create(folder, head)
    return Opened(folder, journal, [head], SoakState())


def reopen(folder: Path) -> Opened:
    """Continue a soak: numbering, elapsed time and the session count carry on."""
    journal, records, cut = Journal.reopen(folder)
    numbers = [r.cycle for r in records if isinstance(r, CycleRecord | InterruptedRecord)]
    elapsed = [r.elapsed_s or 0.0 for r in records if isinstance(r, CycleRecord | EndRecord)]
    state = SoakState(
        records=[r for r in records if isinstance(r, CycleRecord)],
        next_cycle=max(numbers, default=0) + 1,
        session=2 + sum(1 for r in records if isinstance(r, ResumeRecord)),
        elapsed_before_s=float(max(elapsed, default=0.0)),
    )
    return Opened(folder, journal, records, state, cut)
