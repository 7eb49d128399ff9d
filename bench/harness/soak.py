"""Pieces the soak benches share (soak_faults, chaos): the `rig soak` command line, the
journal as the bench reads it, the rig's child processes, and the outcome the
simulator's truth calls for."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def soak_cmd(config: Path, *args: str) -> list[str]:
    """`rig soak` in a process of its own (`python -m rig.soak` is the same command)."""
    return [sys.executable, "-m", "rig.soak", "--config", str(config), "--json", *args]


def journal(folder: Path) -> list[dict[str, Any]]:
    """The soak's journal lines as written so far (a torn last line left out)."""
    path = folder / "journal.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_bytes().split(b"\n"):
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a torn last line
    return out


def cycles_done(folder: Path) -> int:
    return sum(1 for r in journal(folder) if r.get("type") == "cycle")


def children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def expected(outcome_fault: str | None) -> str | None:
    """The outcome the evidence must give for an injected fault (None: anything goes)."""
    if outcome_fault is None or outcome_fault.startswith("garbage"):
        return "ok"
    kind, _, arg = outcome_fault.partition(":")
    if kind == "missing-marker" and arg == "bootm":
        # The bootloader's only hook: nothing in the boot shows it has one, so a boot
        # that reached its UI is ok (the landmark stands in, a note says so).
        return "ok"
    return {
        "hang": f"hang_in_{arg}",
        "panic": "panic",
        "console-closed": "console_lost",
        "console-lost": "console_lost",
        "missing-marker": "missing_marker",
        "analyzer": "analyzer_error",
        "brownout": "reset",
    }.get(kind)
