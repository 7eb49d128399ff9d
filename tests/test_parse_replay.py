"""Console fixtures (tests/data/consoles/) replayed as the rig would have read them.

A fixture is the console text as it was on the wire (`NAME.log`) and its timing
(`NAME.json`): the baud rate, when the first byte left the board, when the kernel clock
started (printk 0.000000, seconds from the power edge) and `pauses`: `[text, seconds,
at]` = the board was silent for `seconds` before byte `at` of the next occurrence of
`text`. Bytes leave at 10/baud; a printk-stamped line starts no earlier than
`kernel_start_s` + its stamp. The host reads what arrived in each 1 ms USB frame.

Other test modules import `load` from here.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rig import names
from rig.analysis.events import Timebase, build_timebase
from rig.analysis.hostclock import host_only
from rig.analysis.lines import Line, split_lines
from rig.model import Chunk, MarkerScan

CONSOLES = Path(__file__).parent / "data" / "consoles"
POWER_ON_NS = 7_000_000_000
USB_FRAME_S = 1e-3
USB_LATENCY_S = 0.4e-3
SAMPLERATE = 1_000_000
POWER_SAMPLE = 2_000  # the power edge, 2 ms into the capture
_STAMP = re.compile(rb"(?:<\d>)?\[\s*(\d+)\.(\d{6})\]")


@dataclass(frozen=True)
class Fixture:
    name: str
    data: bytes
    baud: int
    kernel_start_s: float | None
    starts: tuple[float, ...]  # when each byte's start bit left the board (reference s)
    chunks: tuple[Chunk, ...]

    @functools.cached_property
    def lines(self) -> list[Line]:
        return split_lines(self.chunks)

    def start_s(self, line: Line) -> float:
        return self.starts[line.offset]

    def host_tb(self) -> Timebase:
        """Console only: no capture, t = 0 at the power-on command."""
        return build_timebase(None, self.lines, POWER_ON_NS, self.baud)

    def nofit_tb(self) -> Timebase:
        """Host clock only, printk stamps not mapped (fewer than three of them, say)."""
        return Timebase("host", None, None, None, host_only(POWER_ON_NS, 10 / self.baud), {})

    def analyzer_tb(self) -> Timebase:
        """A capture whose marker edges fall where the tag lines started."""
        edges: dict[str, tuple[int, ...]] = {
            names.canonical_marker(ln.tag): (POWER_SAMPLE + round(self.start_s(ln) * SAMPLERATE),)
            for ln in self.lines
            if ln.tag
        }
        scan = MarkerScan(
            SAMPLERATE,
            POWER_SAMPLE + 20 * SAMPLERATE,
            names.CHANNELS,
            (POWER_SAMPLE,),
            (),
            edges,
        )
        return build_timebase(scan, self.lines, POWER_ON_NS, self.baud)


def _pauses(data: bytes, pauses: list[list[object]]) -> dict[int, float]:
    out: dict[int, float] = {}
    last = -1
    for text, seconds, at in pauses:
        assert isinstance(text, str) and isinstance(at, int) and isinstance(seconds, float)
        i = data.find(text.encode(), max(0, last - at + 1))
        assert i >= 0, f"pause text not found after byte {last}: {text!r}"
        last = i + at
        out[last] = out.get(last, 0.0) + seconds
    return out


def _pace(data: bytes, meta: dict[str, object]) -> list[float]:
    baud = meta["baud"]
    assert isinstance(baud, int)
    char_s = 10 / baud
    k0 = meta.get("kernel_start_s")
    pause = _pauses(data, meta["pauses"])  # type: ignore[arg-type]
    t = float(meta["first_byte_s"])  # type: ignore[arg-type]
    starts: list[float] = []
    line_start = True
    for off, byte in enumerate(data):
        if line_start and isinstance(k0, float) and (m := _STAMP.match(data, off)):
            t = max(t, k0 + int(m.group(1)) + int(m.group(2)) / 1e6)
        t += pause.get(off, 0.0)
        starts.append(t)
        t += char_s
        line_start = byte == 0x0A
    return starts


def _chunks(data: bytes, starts: list[float], char_s: float) -> list[Chunk]:
    chunks: list[Chunk] = []
    begin, frame = 0, None
    for off, t in enumerate(starts):
        f = math.ceil((t + char_s) / USB_FRAME_S)
        if frame is not None and f != frame:
            chunks.append(_chunk(data[begin:off], frame))
            begin = off
        frame = f
    if frame is not None:
        chunks.append(_chunk(data[begin:], frame))
    return chunks


def _chunk(data: bytes, frame: int) -> Chunk:
    return Chunk(POWER_ON_NS + round((frame * USB_FRAME_S + USB_LATENCY_S) * 1e9), data)


@functools.cache
def load(name: str) -> Fixture:
    data = (CONSOLES / f"{name}.log").read_bytes()
    meta = json.loads((CONSOLES / f"{name}.json").read_text())
    starts = _pace(data, meta)
    chunks = _chunks(data, starts, 10 / meta["baud"])
    return Fixture(
        name, data, meta["baud"], meta.get("kernel_start_s"), tuple(starts), tuple(chunks)
    )


FIXTURES = ("ecovec-2009.01-2.6.31", "imx8mm-2023.04-6.1-systemd", "stm32mp1-2023.04-bootstage")


def test_replay_keeps_every_byte_and_paces_at_the_baud_rate() -> None:
    for name in FIXTURES:
        fx = load(name)
        assert b"".join(c.data for c in fx.chunks) == fx.data
        gaps = [b - a for a, b in zip(fx.starts, fx.starts[1:], strict=False)]
        assert min(gaps) >= 10 / fx.baud - 1e-12
        assert all(b.t_ns > a.t_ns for a, b in zip(fx.chunks, fx.chunks[1:], strict=False))


def test_replay_honours_printk_stamps() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    assert fx.kernel_start_s is not None
    for ln in fx.lines:
        if ln.printk_ts is not None:
            # The generator kept stamps consistent with the console: no line is late.
            assert abs(fx.start_s(ln) - (fx.kernel_start_s + ln.printk_ts)) < 2e-6


def test_analyzer_timebase_fits_the_printk_clock() -> None:
    fx = load("ecovec-2009.01-2.6.31")
    tb = fx.analyzer_tb()
    # The kernel's hooks stamp at their edge; ui_ready's userspace tag is stamped after
    # its edge by a path that varies, so it is set apart while kernel anchors exist.
    assert tb.printk is not None and len(tb.printk.anchors) == 2
    assert [a.name for a in tb.printk.late] == ["ui_ready"]
    assert tb.printk.offset == pytest.approx(fx.kernel_start_s, abs=2e-6)
