"""What the nightly gate of `rig trend --fail-on-new` remembers between runs: the
regressions it has already reported, per board, variant and stage, in
`<results_dir>/.trend/last.json` (docs/trend.md, "The nightly gate")."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rig.artifacts.atomic import write_text
from rig.errors import InputError
from rig.untrusted import parse_json

SCHEMA = "bootrig.trend-state/1"
STATE_DIR = ".trend"
STATE_FILE = "last.json"


@dataclass(frozen=True)
class Known:
    board: str
    variant: str
    stage: str
    time_ns: int  # power-on time of the first boot after the change point
    run_id: str
    shift_s: float
    reported_utc: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.board, self.variant, self.stage)


def default_path(results_dir: Path) -> Path:
    return results_dir / STATE_DIR / STATE_FILE


def load(path: Path) -> list[Known]:
    """The remembered regressions; none when the file does not exist yet."""
    if not path.exists():
        return []
    try:
        doc = parse_json(path.read_bytes())  # strict and bounded (rig.untrusted)
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"schema {doc.get('schema')!r}, expected {SCHEMA!r}")
        return [Known(**{k: r[k] for k in Known.__dataclass_fields__}) for r in doc["regressions"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise InputError(
            f"{path}: not a trend state file ({e}); remove it to start afresh"
        ) from None


def save(path: Path, known: list[Known], run: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    known = sorted(set(known), key=lambda k: (k.key, k.time_ns))
    doc = {"schema": SCHEMA, "last_run": run, "regressions": [asdict(k) for k in known]}
    write_text(path, json.dumps(doc, indent=2) + "\n")
