"""One rig per labgrid place on this host at a time.

labgrid grants a place to a user on a host, not to a process: two `rig run --place b1`
of one CI user would each power-cycle the board under the other's boots. So a bench
with a place also claims it here: an flock on a per-user file named after the
coordinator and the place, dropped by the kernel when the process dies. Claims nest
within a process (a Robot suite's place and the `Run Soak` bench inside it).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
import threading
from pathlib import Path

from rig.errors import InstrumentError

#: This process's claims: lock file -> [fd, how many holders].
_HELD: dict[Path, list[int]] = {}
_GUARD = threading.Lock()


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
        self._held = False

    def claim(self) -> None:
        if self._held:
            return
        with _GUARD:
            held = _HELD.get(self.path)
            if held is not None:
                held[1] += 1
                self._held = True
                return
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise InstrumentError(
                    f"labgrid place {self.place!r} is in use by another rig on this host "
                    f"(PID {holder}): labgrid grants a place to a user, not a process, so "
                    "both would switch one board; run one rig (one suite, one soak) per "
                    "place at a time"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # for the message above
            _HELD[self.path] = [fd, 1]
            self._held = True

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        with _GUARD:
            held = _HELD[self.path]
            held[1] -= 1
            if held[1] > 0:
                return
            del _HELD[self.path]
            with contextlib.suppress(OSError):
                os.ftruncate(held[0], 0)
            os.close(held[0])  # drops the flock
