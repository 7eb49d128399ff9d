"""Ctrl-C and SIGTERM as a request to stop the soak cleanly: the first only sets a flag
(the cycle in flight ends, the target is powered off, the journal closed); a second
Ctrl-C raises KeyboardInterrupt at once."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from rig.errors import EXIT_SIGINT, EXIT_SIGTERM

EXIT_CODES = {signal.SIGINT: EXIT_SIGINT, signal.SIGTERM: EXIT_SIGTERM}


class StopFlag:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.signum: int | None = None

    def is_set(self) -> bool:
        return self.event.is_set()

    def request(self, signum: int) -> None:
        self.signum = self.signum or signum
        self.event.set()

    @property
    def exit_code(self) -> int:
        return (
            EXIT_CODES.get(signal.Signals(self.signum), EXIT_SIGINT) if self.signum else EXIT_SIGINT
        )

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.event.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.request(signum)

    @contextmanager
    def installed(self) -> Iterator[StopFlag]:
        """Handle SIGINT and SIGTERM while the block runs (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        old = {s: signal.signal(s, self._handle) for s in EXIT_CODES}
        try:
            yield self
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)
