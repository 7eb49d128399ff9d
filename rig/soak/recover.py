"""On resume: a journal line for each cycle folder the journal does not mention (a
killed rig leaves at most two). A cycle whose run.json says it ended is analyzed like
any other; one cut short is a `rig_error`, noted in run.json (docs/soak.md, "Stopping
and resuming"). Nothing is deleted.
"""

from __future__ import annotations

import re
from pathlib import Path

from rig.artifacts import rundir
from rig.errors import ArtifactError
from rig.model.soak import CycleRecord, InterruptedRecord, OtherRecord, Record
from rig.soak.record import mark_rig_error

_RUN_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{6}$")
KILLED = "interrupted: the rig stopped during this cycle (killed or crashed); artifacts partial"


def orphans(folder: Path, records: list[Record]) -> list[Path]:
    """Cycle folders under the soak folder with no journal line (of any kind, one this
    rig does not know too), oldest first."""
    known = {r.run_id for r in records if isinstance(r, CycleRecord | InterruptedRecord)}
    other = (r.extra.get("run_id") for r in records if isinstance(r, OtherRecord))
    known |= {str(run_id) for run_id in other if run_id}
    return sorted(
        p for p in folder.iterdir() if p.is_dir() and _RUN_ID.match(p.name) and p.name not in known
    )


def prepare(orphan: Path) -> str | None:
    """Make an orphan ready for `record.finish`; returns the detail to journal."""
    try:
        run = rundir.read_run(orphan)
    except ArtifactError:
        return "no run.json: the rig stopped before the board was powered"
    if not run.unfinished:
        return "recovered on resume: captured, not yet journaled when the rig stopped"
    mark_rig_error(orphan, KILLED)
    return KILLED
