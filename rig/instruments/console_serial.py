"""The target's serial console, stamped on the host monotonic clock by its reader
(console_reader.py); each read goes to `console.jsonl` as it arrives and to `on_chunk`."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

import serial

from rig.errors import InstrumentError
from rig.instruments.console_reader import ProcReader, ThreadReader, wait_fd
from rig.instruments.exclusive import open_serial
from rig.instruments.registry import CONSOLE, BenchContext
from rig.model import Chunk
from rig.model.codec import load
from rig.model.run import RunConsoleReader
from rig.steps import as_step

#: How long one blocking read waits before checking whether to stop (ports without a
#: file descriptor, read in a thread of the rig).
_POLL_S = 0.05
#: How long a write may wait for the target to take the bytes.
_WRITE_S = 2.0


@CONSOLE.register("serial")
class SerialConsole:
    """Reads a serial port in a thread; `on_chunk` sees every chunk (for tag detection)."""

    @classmethod
    def build(cls, _s: None, bench: BenchContext) -> SerialConsole:
        port = bench.port(bench.shared.console_port, "console", "console")
        return cls(port, bench.shared.baud)

    def __init__(self, port: str, baud: int) -> None:
        self.baud = baud
        self._ser = self._open(port)
        self.port = port
        self.chunks: list[Chunk] = []
        self.error: str | None = None
        #: console.jsonl could not be written (a full disk) from read `unwritten_from` on.
        self.write_error: str | None = None
        self.unwritten_from: int | None = None
        self._jsonl: Path | None = None
        #: The reader's self-check of the last boot (run.json `console_reader`).
        self.reader_check: RunConsoleReader | None = None
        self._reader: ProcReader | ThreadReader | None = None  # the port's, kept
        self._reading = False
        self._thread: threading.Thread | None = None
        self._out: IO[str] | None = None
        self._start_reader()

    def _open(self, port: str) -> serial.SerialBase:
        ser = open_serial(port, "console", baudrate=self.baud, timeout=_POLL_S)
        with contextlib.suppress(NotImplementedError):  # rfc2217:// has no write timeout
            ser.write_timeout = _WRITE_S
        return ser

    def reopen(self, port: str) -> None:
        """Switch to another port between boots (an emulated board's new pty)."""
        self._close_reader()
        self._ser.close()
        self._ser = self._open(port)
        self.port = port
        self._start_reader()

    def _start_reader(self) -> None:
        """Started with the port: a process takes tens of ms to start, which must not
        fall between arming the analyzer and power-on."""
        fd = wait_fd(self._ser)
        try:
            self._reader = (
                ProcReader(fd, self.port) if fd is not None else ThreadReader(self._ser, self.port)
            )
        except BaseException:
            self._ser.close()
            raise

    @as_step("console open")
    def start(self, jsonl: Path, on_chunk: Callable[[Chunk], None] | None = None) -> None:
        self._ser.reset_input_buffer()  # what came before power-on is not this boot's
        self.chunks = []
        self.error = None
        self.write_error = None
        self.unwritten_from = None
        self.reader_check = None
        self._out = jsonl.open("w", encoding="ascii")
        self._jsonl = jsonl
        if self._reader is None:  # closed since: start it again
            self._start_reader()
        assert self._reader is not None
        reads: queue.SimpleQueue[Chunk | None] = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._loop, args=(reads, on_chunk), name="console-record", daemon=True
        )
        self._thread.start()
        self._reader.start(reads)
        self._reading = True

    def _loop(
        self, reads: queue.SimpleQueue[Chunk | None], on_chunk: Callable[[Chunk], None] | None
    ) -> None:
        """Records the reader's chunks until it hands over None (it stopped)."""
        out = self._out
        assert out is not None
        while (chunk := reads.get()) is not None:
            self.chunks.append(chunk)
            if self.write_error is None:
                self._record(out, chunk)
            if on_chunk:
                on_chunk(chunk)

    def _record(self, out: IO[str], chunk: Chunk) -> None:
        """Append a read to console.jsonl; a full disk ends the recording, not the reading."""
        rec = {"t_ns": chunk.t_ns, "data_b64": base64.b64encode(chunk.data).decode("ascii")}
        try:
            out.write(json.dumps(rec) + "\n")
            out.flush()
        except OSError as e:
            self.write_error = f"{self._jsonl}: {e.strerror or e}"
            self.unwritten_from = len(self.chunks) - 1

    @as_step("console close")
    def stop(self) -> list[Chunk]:
        reader = self._reader
        if reader is not None and self._reading:
            self._reading = False
            reader.stop()
            if reader.summary is not None:
                self.reader_check = load(RunConsoleReader, reader.summary)
            if reader.error is not None:
                self.error = f"console {self.port}: {reader.error}"
        if self._thread:
            self._thread.join(timeout=5)
        if self._out:
            try:
                self._out.flush()
                os.fsync(self._out.fileno())
            except OSError as e:
                if self.write_error is None:
                    self.write_error = f"{self._jsonl}: {e.strerror or e}"
                    self.unwritten_from = len(self.chunks)  # unknown: buffered ones lost
            with contextlib.suppress(OSError):
                self._out.close()
            self._out = None
        return self.chunks

    def write(self, data: bytes) -> None:
        """Type at the target (U-Boot's prompt, rig/instruments/uboot_console.py)."""
        # No flush(): on a pty it is tcdrain, which waits until the far end reads, and an
        # emulated UART whose guest stopped reading (U-Boot booting on past a key sent
        # too late) never does: the restore of a changed environment hung there.
        try:
            self._ser.write(data)
        except serial.SerialTimeoutException:
            raise InstrumentError(
                f"console {self.port}: the target took no input for {_WRITE_S:g} s "
                "(nothing on its side reads the line)"
            ) from None
        except (OSError, serial.SerialException) as e:
            raise InstrumentError(f"console {self.port}: cannot write: {e}") from None

    def _close_reader(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def close(self) -> None:
        self.stop()
        self._close_reader()
        self._ser.close()
