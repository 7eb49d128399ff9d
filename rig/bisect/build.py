"""The user's build command for one commit: an argument list (no shell), with `{worktree}`,
`{commit}` and `{out}` replaced, run in the worktree with a timeout; its output goes to
the step's build.log. A build that fails or times out makes the commit a skip."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from rig.errors import InputError


def substitute(text: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def run_build(
    argv: Sequence[str],
    cwd: Path,
    log: Path,
    timeout_s: float,
    stop: threading.Event,
) -> str:
    """Run the build; on timeout or a stop request its whole process group is killed.
    Returns why it failed (the exit status, the timeout), "" when it did not."""
    t0 = time.monotonic()
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        try:
            proc = subprocess.Popen(
                list(argv), cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        except OSError as e:
            raise InputError(f"--build {argv[0]!r}: cannot run: {e.strerror or e}") from None
        why = ""
        while proc.poll() is None:
            if stop.is_set() or time.monotonic() - t0 > timeout_s:
                why = "interrupted" if stop.is_set() else f"timed out after {timeout_s:g} s"
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.05)
        code = proc.wait()
        if not why and code != 0:
            why = f"exit status {code}"
        out.write(f"# {why or 'ok'} after {time.monotonic() - t0:.1f} s\n")
    return why
