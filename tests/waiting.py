"""Waiting on an event instead of sleeping: a test polls for what it needs (a reading
count, a console line, a process) until a deadline generous enough for a loaded 2-core
machine, and fails naming what it waited for."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def wait_until(what: str, check: Callable[[], T], timeout_s: float = 30.0) -> T:
    """Poll `check` until it returns something true, and return that; after `timeout_s`,
    fail saying what never happened."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}")
        time.sleep(0.01)


def console_so_far(results: Path) -> str:
    """The console text a live `rig run` under `results` has recorded so far (its
    console.jsonl, appended and flushed read by read; a line still being written is left
    for the next poll)."""
    text = b""
    for jsonl in results.glob("*/console.jsonl"):
        for line in jsonl.read_text().splitlines(keepends=True):
            if line.endswith("\n"):
                text += base64.b64decode(json.loads(line)["data_b64"])
    return text.decode(errors="replace")


def signal_when(
    proc: subprocess.Popen[str], ready: Callable[[], object], signum: int, timeout_s: float
) -> tuple[str, str]:
    """Once `ready()` returns, send `signum` to `proc` and read its output (stdout, stderr)
    within `timeout_s`; the process is killed if it is still there, whatever failed."""
    try:
        ready()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=timeout_s)
        return out or "", err or ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
