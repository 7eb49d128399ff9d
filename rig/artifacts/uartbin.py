"""`uart.bin`: the console decoded from the analyzer, with each byte's sample span
(layout: docs/engines.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from rig.artifacts.atomic import atomic_open
from rig.errors import ArtifactError
from rig.model.uart import UartBytes
from rig.untrusted import parse_json

UART_BIN = "uart.bin"
SCHEMA = "bootrig.uart/1"
LAYOUT = "header line, data u8[bytes], ss <i8[bytes], es <i8[bytes], start <i8[bytes]"
_PER_BYTE = 1 + 3 * 8


def write_uart_bin(path: Path, result: UartBytes) -> None:
    path = Path(path)
    n = len(result.data)
    header = {
        "schema": SCHEMA,
        "channel": result.channel,
        "samplerate": result.samplerate,
        "baud": result.baud,
        "baud_detected": result.baud_detected,
        "frame_errors": result.frame_errors,
        "bytes": n,
        "layout": LAYOUT,
    }
    with atomic_open(path, "wb") as f:
        f.write(json.dumps(header).encode() + b"\n")
        f.write(result.data)
        f.write(np.asarray(result.ss, dtype="<i8").tobytes())
        f.write(np.asarray(result.es, dtype="<i8").tobytes())
        f.write(np.asarray(result.start, dtype="<i8").tobytes())


def read_uart_bin(path: Path) -> UartBytes:
    """Read a `uart.bin` back; errors name the file and what is wrong."""
    path = Path(path)
    raw = path.read_bytes()
    head, _, body = raw.partition(b"\n")
    try:
        h = parse_json(head)  # strict: no Infinity for int() to overflow on
        if not isinstance(h, dict) or h.get("schema") != SCHEMA:
            raise ValueError(f"expected a header object with schema {SCHEMA!r}")
        n = int(h["bytes"])
        baud = None if h["baud"] is None else int(h["baud"])
        meta = (str(h["channel"]), int(h["samplerate"]), baud, bool(h["baud_detected"]))
        errors = int(h["frame_errors"])
    except (ValueError, KeyError, TypeError) as e:
        raise ArtifactError(f"{path}: not a {SCHEMA} file: {e}") from None
    if n < 0 or len(body) != _PER_BYTE * n:
        raise ArtifactError(
            f"{path}: header says {n} bytes, body has {len(body)} bytes ({_PER_BYTE} each)"
        )
    channel, samplerate, baud, detected = meta
    return UartBytes(
        channel=channel,
        samplerate=samplerate,
        baud=baud,
        baud_detected=detected,
        data=body[:n],
        ss=np.frombuffer(body, "<i8", n, n).astype(np.int64),
        es=np.frombuffer(body, "<i8", n, 9 * n).astype(np.int64),
        frame_errors=errors,
        start=np.frombuffer(body, "<i8", n, 17 * n).astype(np.int64),
    )
