"""A Numato Lab USB relay module (the serial ASCII family) on a pseudo-terminal.

Commands end with CR: `relay on N`, `relay off N`, `relay read N` (N from 0), `ver`,
`id get`. Like the real module it echoes what it receives and ends every answer with
the `>` prompt, so a driver can tell that a command was taken.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback

from simboard.rawpty import PtyDevice
from simboard.relay import FrameHandler

VERSION = "00000008"
DEVICE_ID = "00000001"


class NumatoPort(PtyDevice):
    thread_name = "numato"

    def __init__(self, channels: int, on_frame: FrameHandler) -> None:
        super().__init__()
        self.channels = channels
        self.state = dict.fromkeys(range(channels), False)
        self.commands = 0
        self.errors = 0
        self._on_frame = on_frame
        self._buf = b""
        self._start()

    def _answer(self, line: str, t_ns: int) -> str:
        words = line.split()
        if words[:1] == ["ver"]:
            return VERSION
        if words[:2] == ["id", "get"]:
            return DEVICE_ID
        if len(words) == 3 and words[0] == "relay" and words[1] in ("on", "off", "read"):
            try:
                n = int(words[2], 36)  # 0-9 then A-V, as the 32-channel modules count
            except ValueError:
                n = -1
            if 0 <= n < self.channels:
                if words[1] == "read":
                    return "on" if self.state[n] else "off"
                self.state[n] = words[1] == "on"
                self.commands += 1
                self._on_frame(n + 1, int(self.state[n]), t_ns)
                return ""
        self.errors += 1
        return ""  # the module answers unknown commands with just the prompt

    def received(self, data: bytes, t_ns: int) -> None:
        out = data  # echo
        self._buf += data
        while b"\r" in self._buf:
            line, self._buf = self._buf.split(b"\r", 1)
            try:
                answer = self._answer(line.decode("ascii", "replace").strip(), t_ns)
            except Exception:  # a model bug must not leave the relay deaf
                traceback.print_exc(file=sys.stderr)
                answer = ""
            out += b"\n\r" + (answer.encode() + b"\n\r" if answer else b"") + b">"
        with contextlib.suppress(OSError):  # nobody reads: the answer is lost, as on a wire
            os.write(self.pty.master, out)
