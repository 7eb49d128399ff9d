"""A CH340 USB relay module (LCUS-1/2/4 style) on a pseudo-terminal.

Frames are 4 bytes `A0 <channel> <state> <checksum>`, checksum = (A0 + channel + state)
& 0xFF, state 1 closes the contact. Real modules never answer, so neither do we.
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
import traceback
from collections.abc import Callable

from rig.sim.rawpty import RawPty

START = 0xA0


class RelayParser:
    """Byte-stream parser that resyncs on 0xA0; bad frames are ignored and counted."""

    def __init__(self, channels: int) -> None:
        self.channels = channels
        self.frames = 0
        self.bad_frames = 0
        self.garbage = 0  # bytes skipped while looking for a frame start
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, int]]:
        """Returns the valid (channel, state) frames completed by `data`."""
        buf = self._buf
        buf += data
        out: list[tuple[int, int]] = []
        while True:
            start = buf.find(START)
            if start < 0:
                self.garbage += len(buf)
                buf.clear()
                break
            self.garbage += start
            del buf[:start]
            if len(buf) < 4:
                break
            _, channel, state, check = buf[:4]
            if (
                check == (START + channel + state) & 0xFF
                and 1 <= channel <= self.channels
                and state in (0, 1)
            ):
                out.append((channel, state))
                self.frames += 1
                del buf[:4]
            else:
                # Drop only the start byte: a real frame may begin inside the bad one.
                self.bad_frames += 1
                del buf[:1]
        return out


FrameHandler = Callable[[int, int, int], None]  # channel, state, host ns of completion


class RelayPort:
    """Reads the pty in a thread and reports each valid frame with its arrival time."""

    def __init__(self, channels: int, on_frame: FrameHandler) -> None:
        self.pty = RawPty()
        self.path = self.pty.path
        self.parser = RelayParser(channels)
        self._on_frame = on_frame
        self._lock = threading.Lock()  # the parser's counters are read by status
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._loop, name="relay", daemon=True)
        self._thread.start()

    def counters(self) -> tuple[int, int, int]:
        with self._lock:
            return self.parser.frames, self.parser.bad_frames, self.parser.garbage

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
            t_ns = time.monotonic_ns()  # the frame is complete when its last byte is in
            with self._lock:
                frames = self.parser.feed(data)
            for channel, state in frames:
                try:
                    self._on_frame(channel, state, t_ns)
                except Exception:  # a model bug must not leave the relay deaf
                    traceback.print_exc(file=sys.stderr)

    def close(self) -> None:
        os.write(self._stop_w, b"x")
        self._thread.join(timeout=2)
        for fd in (self._stop_r, self._stop_w):
            os.close(fd)
        self.pty.close()
