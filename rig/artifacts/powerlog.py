"""`power.jsonl`: a supply's readings through the boot, one JSON record per line
(docs/contract.md, "power.jsonl")."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rig.artifacts.atomic import atomic_open
from rig.errors import ArtifactError
from rig.untrusted import check_regular, parse_json, read_line

POWER_JSONL = "power.jsonl"
#: The same records across the off-hold before the boot (OUTP OFF to OUTP ON), when the
#: supply switched the board: the rail's fall and whether it reached 0 V.
HOLD_JSONL = "power_hold.jsonl"


def write(folder: Path, records: Iterable[dict[str, Any]], name: str = POWER_JSONL) -> Path:
    """Write atomically (a reader never sees half a file) and fsync: evidence."""
    path = Path(folder) / name
    with atomic_open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":"), allow_nan=False) + "\n")
    return path


def read(folder: Path, name: str = POWER_JSONL) -> list[dict[str, Any]] | None:
    """The records, or None when the folder has no such file."""
    path = Path(folder) / name
    if not check_regular(path):
        return None
    out: list[dict[str, Any]] = []
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
                expected = "{t_ns: int, v: number, a: number}"
                raise ArtifactError(f"{path}:{n}: expected {expected}, found {line[:200]!r}")
            out.append(r)
    return out


def _valid(r: object) -> bool:
    if not isinstance(r, dict) or not isinstance(r.get("t_ns"), int):
        return False
    nums = [r.get("v"), r.get("a")]
    return all(
        isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in nums
    )
