"""Child processes of the rig (sigrok-cli, QEMU) never outlive it.

The rig ends its children by PID on every normal exit and on SIGINT/SIGTERM; against a
SIGKILL of the rig only the kernel can help: PR_SET_PDEATHSIG sends the child SIGKILL
when the thread that started it dies.
"""

from __future__ import annotations

import ctypes
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """`preexec_fn` for Popen: runs in the child between fork and exec."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
