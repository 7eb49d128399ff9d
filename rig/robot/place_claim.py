"""One Robot suite per labgrid place on this host at a time.

labgrid grants a place to a user on a host (``host/user``), not to a process, and a
place the user already holds is used as it is (docs/instruments.md, "labgrid"). pabot
starts a process per suite and argument file, so ``pabot --argumentfile1 b1.args
testsuites/`` would run every suite on b1 at once, each power-cycling the same board
under the others' boots, and labgrid could not tell. A suite therefore also claims the
place on this host: an flock on a per-user file named after the coordinator and the
place, which the kernel drops when the process dies, however it dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
from pathlib import Path

from rig.errors import InstrumentError


def claim_dir() -> Path:
    """Per user, so that another user's files cannot be made to block or fool ours."""
    d = Path(tempfile.gettempdir()) / f"bootrig-{os.getuid()}" / "places"
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    return d


class PlaceClaim:
    """`claim()` takes the place for this process, or fails naming who has it;
    `release()` gives it back (also done by the kernel when the process ends)."""

    def __init__(self, place: str, coordinator: str | None) -> None:
        self.place = place
        # The same place name under two coordinators is two boards.
        where = coordinator or os.environ.get("LG_COORDINATOR") or "default"
        self.path = claim_dir() / re.sub(r"[^A-Za-z0-9._-]", "_", f"{where}--{place}.lock")
        self._fd: int | None = None

    def claim(self) -> None:
        if self._fd is not None:
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise InstrumentError(
                f"labgrid place {self.place!r} is in use by another suite on this host "
                f"(PID {holder}): labgrid grants a place to a user, not a process, so both "
                "would switch one board; give each place its own pabot argument file and "
                "run one suite per place at a time"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # for the message above
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # drops the flock
