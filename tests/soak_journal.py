"""A soak journal's lines as the plain JSON objects outside tools see, for tests to check
a journal's content by (the rig itself reads it typed: rig.soak.journal.read_records)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rig.soak.journal import read_records


def read_journal(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The intact lines as JSON objects and their byte length; the rig's own reader
    checks the journal (a bad line, no header) and finds where a torn tail starts."""
    _, good = read_records(path)
    return [json.loads(line) for line in path.read_bytes()[:good].splitlines()], good
