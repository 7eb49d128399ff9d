"""A raw pseudo-terminal pair standing in for a USB-serial device node."""

from __future__ import annotations

import contextlib
import os
import tty


class RawPty:
    """`path` is what clients open (like /dev/ttyUSB0); the simulator uses `master`.

    We keep a slave fd open ourselves: without it the master sees EIO (and loses data)
    whenever the last client closes the port, which a real device node never does.
    """

    def __init__(self, nonblocking_master: bool = False) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # all 8 bits through, no echo, no CR/LF translation
        os.set_blocking(self.master, not nonblocking_master)
        self.path = os.ttyname(self.slave)

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)
