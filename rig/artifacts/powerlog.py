"""`power.jsonl`: a supply's readings through the boot, one JSON record per line
(docs/contract.md, "power.jsonl")."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

from rig.artifacts.atomic import atomic_open
from rig.errors import ArtifactError
from rig.model.capture import PowerReading
from rig.model.codec import dump
from rig.untrusted import check_regular, parse_json, read_line

POWER_JSONL = "power.jsonl"
#: The same records across the off-hold before the boot (OUTP OFF to OUTP ON), when the
#: supply switched the board: the rail's fall and whether it reached 0 V.
HOLD_JSONL = "power_hold.jsonl"


def write(folder: Path, records: Iterable[PowerReading], name: str = POWER_JSONL) -> Path:
    """Write atomically (a reader never sees half a file) and fsync: evidence."""
    path = Path(folder) / name
    with atomic_open(path, "w") as f:
        for r in records:
            f.write(json.dumps(dump(r), separators=(",", ":"), allow_nan=False) + "\n")
    return path


def read(folder: Path, name: str = POWER_JSONL) -> list[PowerReading] | None:
    """The readings, or None when the folder has no such file."""
    path = Path(folder) / name
    if not check_regular(path):
        return None
    out: list[PowerReading] = []
    with path.open("rb") as f:
        n = 0
        while line := read_line(f, f"{path}:{n + 1}"):
            n += 1
            if not line.strip():
                continue
            try:
                r = parse_json(line)
            except ValueError as e:  # not strict JSON (rig.untrusted); UnicodeDecodeError too
                raise ArtifactError(f"{path}:{n}: not JSON: {e}") from None
            if not _valid(r):
                expected = "{t_ns: int, v: number, a: number[, t_req_ns: int, t_ans_ns: int]}"
                raise ArtifactError(f"{path}:{n}: expected {expected}, found {line[:200]!r}")
            out.append(
                PowerReading(r["t_ns"], r["v"], r["a"], r.get("t_req_ns"), r.get("t_ans_ns"))
            )
    return out


def _int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _valid(r: object) -> bool:
    if not isinstance(r, dict) or not _int(r.get("t_ns")):
        return False
    nums = [r.get("v"), r.get("a")]
    times = [r.get(k) for k in ("t_req_ns", "t_ans_ns")]
    return all(
        isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in nums
    ) and all(x is None or _int(x) for x in times)
