"""Child processes of the rig (sigrok-cli, QEMU) never outlive it: ended by PID on
every exit, and against a SIGKILL of the rig, PR_SET_PDEATHSIG (the kernel kills the
child when the thread that started it dies)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
from typing import IO

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """`preexec_fn` for Popen: runs in the child between fork and exec."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)


def stop_child(
    proc: subprocess.Popen[bytes], timeout_s: float, first: int | None = signal.SIGTERM
) -> int:
    """End our own child by its PID: `first` (None: it was already asked, say by a
    command or a closed stdin), then SIGKILL when it is still there after `timeout_s`.
    Returns its exit status."""
    if proc.poll() is None and first is not None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(first)
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def file_tail(f: IO[bytes], limit: int = 4096) -> bytes:
    """The last `limit` bytes written to `f`, a child's output (which it may still write)."""
    size = f.seek(0, os.SEEK_END)
    f.seek(max(0, size - limit))
    return f.read(limit)
