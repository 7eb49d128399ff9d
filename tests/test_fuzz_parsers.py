"""Fuzzing the console path with hypothesis: no crash, nothing lost.

Examples per test: BOOTRIG_FUZZ_EXAMPLES (default 100; e.g. 20000 for a long run).
No example database is written (the tree stays clean).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rig.analysis.console import analyze_console
from rig.analysis.events import build_timebase
from rig.analysis.lines import Line, split_lines
from rig.analysis.parsers.console import parse_console
from rig.model import Chunk
from rig.model.codec import dump
from rig.model.options import AnalysisOptions
from tests.test_parse_replay import load

FUZZ = settings(
    max_examples=int(os.environ.get("BOOTRIG_FUZZ_EXAMPLES", "100")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# Fragments of the formats the parsers know, so generated consoles reach deep paths.
TOKENS = [
    "calling  ",
    "initcall ",
    "foo_init+0x0/0x1c",
    " [mod]",
    " @ 1",
    " returned -19",
    " returned 0 after 12 usecs",
    "async_waiting @ 1",
    "async_continuing @ 1 after 5 usec",
    "1_",
    "[    1.234567] ",
    "[    0.000001][    T1] ",
    "<6>",
    "Timer summary in microseconds (3 records):",
    "       Mark    Elapsed  Stage",
    "    224,599    224,599  board_init_f",
    "Accumulated time:",
    "                10,015  dm_r",
    "Hit any key to stop autoboot:  3 ",
    "\b\b\b 2 ",
    "U-Boot 2023.04 (Apr 03 2023 - 12:00:00 +0000)",
    "## Booting kernel from Legacy Image at a0100000 ...",
    "## Loading kernel from FIT Image at 40480000 ...",
    "   Data Size:    1863168 Bytes =  1.8 MB",
    "   Verifying Checksum ... OK",
    "   Uncompressing Kernel Image ... ",
    "   Loading Kernel Image to 40200000",
    "OK",
    "Starting kernel ...",
    "starting USB...",
    "USB0:   scanning bus 0 for devices... 2 USB Device(s) found",
    "123 bytes read in 5 ms",
    "Kernel command line: quiet lpj=1 rootwait",
    "Calibrating delay loop... ",
    "299.00 BogoMIPS (lpj=1495040)",
    "Waiting for root device /dev/mmcblk0p2...",
    "Waiting 2 sec before mounting root device...",
    " mmcblk0: p1 p2",
    "VFS: Mounted root (ext3 filesystem) readonly on device 179:2.",
    "Freeing unused kernel memory: 124k freed",
    "Run /sbin/init as init process",
    "usb 1-1: new high-speed USB device number 2 using ehci",
    "usb 1-1: configuration #1 chosen",
    "Kernel panic - not syncing: oops",
    "Startup finished in 1min 2.345s (kernel) + 5ms (userspace) = 1min 2.35s.",
    "[  OK  ] Started foo.service - Foo.",
    "         Starting foo.service - Foo...",
    "\x1b[0;32m",
    "bootrig: marker do_mount_root",
    "\r\n",
    "\n",
    "\r",
    "\x00",
    " ",
    "1",
]
console_bytes = st.lists(
    st.one_of(st.sampled_from(TOKENS).map(str.encode), st.binary(max_size=12)), max_size=60
).map(b"".join)


@st.composite
def chunked(draw: st.DrawFn) -> tuple[bytes, list[Chunk]]:
    """A byte stream and an arbitrary way of reading it (empty reads included)."""
    data = draw(st.one_of(st.binary(max_size=300), console_bytes))
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    bounds = [0, *cuts, len(data)]
    n = len(bounds) - 1
    gaps = draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n))
    t, chunks = 0, []
    for (a, b), gap in zip(itertools.pairwise(bounds), gaps, strict=True):
        t += gap
        chunks.append(Chunk(t, data[a:b]))
    return data, chunks


def assert_lossless(data: bytes, chunks: list[Chunk], lines: list[Line]) -> None:
    """Each line's bytes are where it says; between lines only the terminator (CR* LF),
    after the last only CRs (or its terminator): the input is rebuilt exactly."""
    rebuilt = bytearray()
    for i, ln in enumerate(lines):
        assert ln.index == i and ln.offset == len(rebuilt)
        assert data[ln.offset : ln.offset + len(ln.raw)] == ln.raw
        end = lines[i + 1].offset if i + 1 < len(lines) else len(data)
        gap = data[ln.offset + len(ln.raw) : end]
        assert re.fullmatch(rb"\r*\n" if i + 1 < len(lines) else rb"\r*\n?", gap), gap
        rebuilt += ln.raw + gap
    assert bytes(rebuilt) == data
    # A line's time is that of the read that carried its first byte.
    starts = [c.t_ns for c in chunks for _ in c.data]
    for ln in lines:
        assert ln.t_ns == starts[ln.offset]


@FUZZ
@given(chunked())
def test_split_lines_loses_nothing_whatever_the_chunking(case: tuple[bytes, list[Chunk]]) -> None:
    data, chunks = case
    lines = split_lines(chunks)
    assert_lossless(data, chunks, lines)
    # The way the stream was read changes times, never the lines themselves.
    whole = split_lines([Chunk(0, data)])
    assert [(x.offset, x.raw) for x in lines] == [(x.offset, x.raw) for x in whole]


@FUZZ
@given(chunked())
def test_parsers_and_analysis_never_crash(case: tuple[bytes, list[Chunk]]) -> None:
    _, chunks = case
    lines = split_lines(chunks)
    parsed = parse_console(lines)
    for rec in parsed.initcalls:
        assert 0 <= rec.line < len(lines)
    tb = build_timebase(None, lines, 0, 115200)
    opts = AnalysisOptions.from_mapping({"app_events": [{"name": "x", "regex": "OK"}]})
    out = analyze_console(lines, tb, 115200, opts)
    json.dumps(dump(out), allow_nan=False)
    for a in out.advisories:
        assert a.gain_s >= 0
        assert all(0 <= e.line < len(lines) for e in a.evidence)


@FUZZ
@given(st.data())
def test_fixture_chunkings_give_the_same_analysis(data: st.DataObject) -> None:
    fx = load("ecovec-2009.01-2.6.31")
    # Re-cut the recorded stream at arbitrary points, keeping each byte's arrival time.
    cuts = sorted(data.draw(st.lists(st.integers(1, len(fx.data) - 1), max_size=40)))
    times = [c.t_ns for c in fx.chunks for _ in c.data]
    bounds = sorted({0, *cuts, *(b for b in range(1, len(times)) if times[b] != times[b - 1])})
    chunks = [
        Chunk(times[a], fx.data[a:b])
        for a, b in zip(bounds, [*bounds[1:], len(times)], strict=False)
    ]
    lines = split_lines(chunks)
    assert lines == fx.lines


HUGE = 1 << 20


def _huge_cases() -> list[bytes]:
    """1 MB single lines built to make a careless regex backtrack."""
    return [
        b"A" * HUGE,
        b"\xff\x00" * (HUGE // 2),
        b"calling  " + b"a" * HUGE,
        b"initcall " + b"a_" * (HUGE // 2),
        b"   Uncompressing " + b" to x" * (HUGE // 5),
        b"   Loading " + b"ab " * (HUGE // 3),
        b"Startup finished in " + b"1s " * (HUGE // 3),
        b"Hit any key to stop autoboot: " + b" \x08" * (HUGE // 2),
        b"[  OK  ] Starting " + b"x" * HUGE,
        b"         Starting " + b"." * HUGE,
        b"Kernel command line: " + b'"a ' * (HUGE // 3),
        b"Timer summary in microseconds (1 records):" + b" 1,000" * (HUGE // 6),
    ]


def test_a_megabyte_line_without_newline_loses_nothing_and_is_fast() -> None:
    for huge in _huge_cases():
        data = b"U-Boot 2009.01\r\nbefore\r\n" + huge
        chunks = [Chunk(i, data[i : i + 4096]) for i in range(0, len(data), 4096)]
        t0 = time.perf_counter()
        lines = split_lines(chunks)
        out = analyze_console(lines, build_timebase(None, lines, 0, 115200), 115200)
        elapsed = time.perf_counter() - t0
        assert elapsed < 3.0, (huge[:30], elapsed)
        assert [ln.raw for ln in lines] == [b"U-Boot 2009.01", b"before", huge]
        assert out.uboot is not None and out.uboot.banners[0].version == "2009.01"


def test_garbage_between_lines_is_kept() -> None:
    data = (
        b"\x00\x00\xffU-Boot 2009.01\r\n\x80\x81\r\n\r\r\n"
        b"[    1.000000] \xc3(Linux version 2.6.31\n"
    )
    lines = split_lines([Chunk(0, data)])
    assert_lossless(data, [Chunk(0, data)], lines)
    out = analyze_console(lines, build_timebase(None, lines, 0, 115200), 115200)
    assert out.uboot is not None and out.uboot.banners[0].version == "2009.01"
