"""Waiting on an event instead of sleeping: a test polls for what it needs (a reading
count, a console line, a process) until a deadline generous enough for a loaded 2-core
machine, and fails naming what it waited for."""

from __future__ import annotations

import time
from collections.abc import Callable
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
