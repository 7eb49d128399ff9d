"""A full disk can take part of a journal line (a short write, no error): the line must
not stay half-written in the middle of the journal, or the soak cannot be resumed. Here
RLIMIT_FSIZE makes the short write happen exactly, in a process of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

CHILD = r"""
import resource, signal, sys
from pathlib import Path
from rig.model.soak import HeaderRecord, InterruptedRecord
from rig.errors import RigError, exit_code
from rig.soak.journal import SCHEMA, Journal, read_records

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
folder = Path(sys.argv[1])
journal = Journal.create(folder, HeaderRecord(schema=SCHEMA, soak_id="s"))
size = (folder / "journal.jsonl").stat().st_size
# Room for 20 more bytes: the next line is written in part, as on a full disk.
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 20, resource.RLIM_INFINITY))
try:
    journal.append(InterruptedRecord(cycle=1, run_id="20250101T000000Z-aaaaaa"))
    print("appended")
except RigError as e:  # the rig failed, not its input: exit 3
    print("refused:", exit_code(e), e)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
for n in (2, 3):  # space again: the soak goes on
    journal.append(InterruptedRecord(cycle=n, run_id=f"20250101T000000Z-aaaaa{n}"))
records, good = read_records(folder / "journal.jsonl")
print([getattr(r, "cycle", None) for r in records], good)
"""


def test_a_short_write_leaves_no_half_line(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "soak")],
                       cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    refused, records = p.stdout.splitlines()
    assert refused.startswith("refused: 3 ") and "cannot append" in refused, refused
    size = (tmp_path / "soak" / "journal.jsonl").stat().st_size
    assert records == f"[None, 2, 3] {size}"  # every line whole, the cut one gone
