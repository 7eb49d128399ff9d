"""A CH340 USB relay module (LCUS-1/2/4 style) on a pseudo-terminal.

Frames are 4 bytes `A0 <channel> <state> <checksum>`, checksum = (A0 + channel + state)
& 0xFF, state 1 closes the contact. Real modules never answer, so neither do we.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable

from simboard.rawpty import PtyDevice

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


class RelayPort(PtyDevice):
    """Reads the pty in a thread and reports each valid frame with its arrival time."""

    thread_name = "relay"

    def __init__(self, channels: int, on_frame: FrameHandler) -> None:
        super().__init__()
        self.parser = RelayParser(channels)
        self._on_frame = on_frame
        self._lock = threading.Lock()  # the parser's counters are read by status
        self._start()

    def counters(self) -> tuple[int, int, int]:
        with self._lock:
            return self.parser.frames, self.parser.bad_frames, self.parser.garbage

    def received(self, data: bytes, t_ns: int) -> None:
        # t_ns: the frame is complete when its last byte is in
        with self._lock:
            frames = self.parser.feed(data)
        for channel, state in frames:
            try:
                self._on_frame(channel, state, t_ns)
            except Exception:  # a model bug must not leave the relay deaf
                traceback.print_exc(file=sys.stderr)
