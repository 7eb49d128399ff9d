"""A Numato Lab USB relay module (the serial ASCII family) on a pseudo-terminal.

Commands end with CR: `relay on N`, `relay off N`, `relay read N` (N from 0), `ver`,
`id get`. Like the real module it echoes what it receives and ends every answer with
the `>` prompt, so a driver can tell that a command was taken.
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
import traceback

from rig.sim.rawpty import RawPty
from rig.sim.relay import FrameHandler

VERSION = "00000008"
DEVICE_ID = "00000001"


class NumatoPort:
    def __init__(self, channels: int, on_frame: FrameHandler) -> None:
        self.pty = RawPty()
        self.path = self.pty.path
        self.channels = channels
        self.state = dict.fromkeys(range(channels), False)
        self.commands = 0
        self.errors = 0
        self._on_frame = on_frame
        self._buf = b""
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._loop, name="numato", daemon=True)
        self._thread.start()

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

    def _loop(self) -> None:
        master = self.pty.master
        while True:
            ready, _, _ = select.select([master, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            t_ns = time.monotonic_ns()
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
            try:
                os.write(master, out)
            except OSError:
                return

    def close(self) -> None:
        os.write(self._stop_w, b"x")
        self._thread.join(timeout=2)
        for fd in (self._stop_r, self._stop_w):
            os.close(fd)
        self.pty.close()
