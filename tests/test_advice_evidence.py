"""Advice to trust: every gain rests on measured evidence, the console is charged only
where its bytes really took their wire time, and the silence after a line is
unattributed, not that line's work.

Synthetic consoles here are built byte by byte: paced ones send a byte every 10/baud s
and deliver them in 1 ms USB frames; unpaced ones deliver each burst at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from rig.analysis.console import ConsoleAnalysis, analyze_console
from rig.analysis.events import build_timebase
from rig.analysis.lines import split_lines
from rig.model import Chunk
from rig.model.options import AnalysisOptions
from rig.model.report import Advisory
from tests.test_parse_replay import FIXTURES, load

BAUD = 115200
CHAR_S = 10 / BAUD
Segment = tuple[float, bytes]  # (silence before it, bytes sent back to back)


def paced(segments: Sequence[Segment], frame_s: float = 1e-3) -> list[Chunk]:
    """Each byte leaves one character time after the previous one (plus any silence) and
    reaches the host in the USB frame after its stop bit."""
    t, frames, order = 0.0, {}, []
    for pause, data in segments:
        t += pause
        for byte in data:
            t += CHAR_S
            f = math.ceil(t / frame_s)
            if f not in frames:
                frames[f] = bytearray()
                order.append(f)
            frames[f].append(byte)
    return [Chunk(round(f * frame_s * 1e9), bytes(frames[f])) for f in order]


def burst(segments: Sequence[Segment]) -> list[Chunk]:
    """An unpaced console: each segment arrives whole, right after its silence."""
    t, out = 0.0, []
    for pause, data in segments:
        t += pause
        out.append(Chunk(round(t * 1e9), data))
        t += 1e-5
    return out


def analyze(chunks: list[Chunk], **options: Any) -> ConsoleAnalysis:
    lines = split_lines(chunks)
    opts = AnalysisOptions.from_mapping(options)
    return analyze_console(lines, build_timebase(None, lines, 0, BAUD), BAUD, opts, chunks)


def _rule(out: ConsoleAnalysis, rule: str) -> list[Advisory]:
    return [a for a in out.advisories if a.rule == rule]


def _kernel(n: int) -> list[Segment]:
    """n printk lines sent back to back, stamped when each one starts on the wire."""
    out: list[Segment] = []
    ts = 0.5
    for i in range(n):
        line = f"[{int(ts):5d}.{round(ts % 1 * 1e6):06d}] some driver: probed device {i}\r\n"
        out.append((0.0, line.encode()))
        ts += len(line) * CHAR_S
    return out


def test_pacing_is_read_from_the_byte_timing() -> None:
    chatty = [(0.0, b"U-Boot 2023.01\r\n"), *_kernel(400)]
    assert analyze(paced(chatty)).pacing.verdict == "paced"
    unpaced = analyze(burst(chatty))
    assert unpaced.pacing.verdict == "unpaced"
    # 400 lines of ~50 bytes need ~1.7 s at 115200 baud; they arrived in milliseconds.
    assert unpaced.pacing.deficit_s > 1.5
    assert analyze(paced([(0.0, b"hello\r\n"), (0.1, b"world\r\n")])).pacing.verdict == ("unknown")


def test_unpaced_console_costs_nothing_and_says_so() -> None:
    segs = [(0.0, b"U-Boot 2023.01\r\nStarting kernel ...\r\n"), *_kernel(400)]
    out = analyze(burst(segs))
    assert _rule(out, "console_output") == [] and _rule(out, "uboot_console") == []
    assert any("not paced" in n and "no console cost" in n for n in out.notes)
    # The same console, paced, costs the bytes' wire time, no more than they took.
    (con,) = _rule(analyze(paced(segs)), "console_output")
    assert con.gain_s == pytest.approx(con.detail["wire_s"])
    assert con.gain_s <= con.evidence_s


def test_paced_console_cost_is_bounded_by_the_time_the_bytes_took() -> None:
    """A console whose reads are late and squeezed (a busy host) cannot cost more than
    the time they took to arrive, even when the bytes' wire time says more."""
    segs = [(0.0, b"U-Boot 2023.01\r\nStarting kernel ...\r\n"), *_kernel(30)]
    chunks = paced(segs)
    # The last 30 ms of bytes read at once, 30 ms early: less than latency can explain.
    k = next(i for i, c in enumerate(chunks) if c.t_ns >= chunks[-1].t_ns - 30e6)
    squeezed = [*chunks[:k], Chunk(chunks[k].t_ns, b"".join(c.data for c in chunks[k:]))]
    (con,) = _rule(analyze(squeezed), "console_output")
    assert con.gain_s <= con.evidence_s < con.detail["wire_s"]


def test_a_verdict_on_the_line_ends_the_step() -> None:
    segs = [
        (0.0, b"## Booting kernel from Legacy Image at a0100000 ...\r\n"),
        (0.0, b"   Verifying Checksum ... "),
        (0.400, b"OK\r\n"),
        (0.200, b"   Uncompressing Kernel Image ... "),
        (0.300, b"OK\r\n"),
        (0.0, b"\r\nStarting kernel ...\r\n"),
    ]
    out = analyze(paced(segs))
    steps = {p.kind: p for p in out.phases}
    assert steps["verify"].duration_s == pytest.approx(0.400, abs=2e-3)
    assert steps["uncompress"].duration_s == pytest.approx(0.300, abs=2e-3)
    # The 200 ms after `OK` is nobody's: it is listed, and ranks, as unattributed.
    (rest,) = [r for r in out.top if r.kind == "unattributed"]
    assert rest.name == "after 'Verifying Checksum ... OK'"
    assert rest.duration_s == pytest.approx(0.200, abs=2e-3)
    assert out.unattributed.total_s == pytest.approx(0.200, abs=2e-3)


def test_preset_calibration_is_not_ranked_by_the_silence_after_it() -> None:
    segs = [
        (0.0, b"[    0.001000] Linux version 2.6.31\r\n"),
        (0.0, b"[    0.010000] Calibrating delay loop (skipped) preset value.. "),
        (0.0, b"299.00 BogoMIPS (lpj=1495040)\r\n"),
        (0.040, b"[    0.058000] bootrig: marker do_mount_root\r\n"),
    ]
    out = analyze(paced(segs))
    assert not [p for p in out.phases if p.kind == "calibrate_delay"]
    assert _rule(out, "calibrate_delay") == []
    first = out.top[0]
    assert first.kind == "unattributed" and "Calibrating delay loop" in first.name
    # Stamps 48 ms apart, minus the calibration line's own 94 bytes on the wire.
    assert first.duration_s == pytest.approx(0.048 - 94 * CHAR_S, abs=1e-5)


def test_measured_calibration_is_timed_by_the_bytes_around_the_loop() -> None:
    segs = [
        (0.0, b"[    0.080000] console [tty0] enabled\r\n"),
        (0.0, b"[    0.088852] Calibrating delay loop... "),
        (0.250, b"299.00 BogoMIPS (lpj=1495040)\r\n"),
        (0.020, b"[    0.365000] Mount-cache hash table entries: 512\r\n"),
    ]
    out = analyze(paced(segs))
    (cal,) = _rule(out, "calibrate_delay")
    assert cal.gain_s == pytest.approx(0.250, abs=2e-3) and cal.gain_kind == "measured"
    assert "`lpj=1495040`" in cal.advice
    # The 20 ms before the next line is not the loop's.
    (rest,) = [r for r in out.unattributed.silences if "Calibrating" in r.name]
    # Stamps apart, minus the loop the bytes showed and the line's 72 bytes on the wire
    # (1 ms USB frames blur the loop's ends).
    assert rest.duration_s == pytest.approx(0.365 - 0.088852 - 0.250 - 72 * CHAR_S, abs=1.5e-3)


def _check_gains(report: ConsoleAnalysis, console_span_s: float) -> None:
    for a in report.advisories:
        assert a.basis, a.rule
        assert 0 <= a.gain_s <= a.evidence_s + 1e-9, (a.rule, a.title)
        if a.rule in ("console_output", "uboot_console"):
            assert a.evidence_s <= console_span_s, a


@pytest.mark.parametrize("name", FIXTURES)
def test_every_gain_rests_on_measured_time_fixtures(name: str) -> None:
    fx = load(name)
    out = analyze_console(fx.lines, fx.analyzer_tb(), fx.baud, None, fx.chunks)
    assert out.advisories
    _check_gains(out, (fx.chunks[-1].t_ns - fx.chunks[0].t_ns) / 1e9)
