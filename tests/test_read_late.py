"""The host clock takes the console reader's self-check: the reads it says it woke late
for are no latency samples, and their lines' stated bands widen by how late, so the
stated uncertainty still holds when the host was busy (issue 21)."""

from __future__ import annotations

import pytest

from rig.analysis.events import build_timebase
from rig.analysis.lines import split_lines
from rig.analysis.readlate import READ_JITTER_S
from rig.model import Chunk, MarkerScan
from rig.model.run import RunConsoleReader
from tests.test_hostclock import BAUD, POWER_ON_NS, Out, console, covered, uboot

PROBE_S = 0.75e-3


def reader(held: list[list[int]], bound_s: float | None = 1e-3) -> RunConsoleReader:
    return RunConsoleReader(
        scheduling="SCHED_FIFO",
        priority=10,
        realtime_error=None,
        waits="select",
        probe_s=PROBE_S,
        bound_s=bound_s,
        probes=400,
        wake_late_us={"p50": 30.0, "p99": 200.0, "max": 400.0},
        tty_late_us={"p50": 40.0, "p99": 250.0, "max": 500.0},
        held=held,
    )


def boot() -> list[Out]:
    kernel = [Out(f"line {i:02d} " + "q" * 30, 0.35 + i * 0.0103, i * 0.0103) for i in range(30)]
    kernel.append(Out("bootrig: marker do_mount_root", 0.35 + 0.31, 0.31))
    user = [Out(f"init: step {i}", 0.75 + 0.02 * i) for i in range(6)]
    return uboot() + kernel + user


def read_late(k: int, late_s: float) -> tuple[object, list[Chunk], list[int]]:
    """The paced console with the read carrying line k (and all that came meanwhile)
    taken `late_s` late; the stamp of that read and the lines in it."""
    c = console(boot(), True, 1e-3, 62, seed=4)
    chunks = [Chunk(ln.t_ns, ln.raw + b"\r\n") for ln in c.lines]
    late_ns = chunks[k].t_ns + round(late_s * 1e9)
    merged = [i for i in range(k, len(chunks)) if chunks[i].t_ns < late_ns]
    late = Chunk(late_ns, b"".join(chunks[i].data for i in merged))
    return c, [*chunks[:k], late, *chunks[merged[-1] + 1 :]], merged


def scan_of(c: object) -> MarkerScan:
    """A capture whose marker edges fall where the tags started."""
    tags = {ln.tag: c.first[ln.index] for ln in c.lines if ln.tag}  # type: ignore[attr-defined]
    return MarkerScan(
        1_000_000,
        2_000_000,
        ("power", *tags),
        (0,),
        (),
        {name: (round(t * 1e6),) for name, t in tags.items()},
    )


@pytest.mark.parametrize("reference", ["host", "analyzer"])
def test_a_read_the_reader_says_was_late_keeps_its_line_covered(reference: str) -> None:
    """Userspace lines (no stamp: timed by arrival alone) read 12 ms late: without the
    reader's word their arrival puts them 12 ms late and outside their band."""
    k = len(uboot()) + 31 + 2  # init: step 2
    c, chunks, _ = read_late(k, 12e-3)
    lines = split_lines(chunks)
    scan = scan_of(c) if reference == "analyzer" else None
    blind = build_timebase(scan, lines, POWER_ON_NS, BAUD, None, chunks)
    missed = [(i, err, u) for i, err, u in covered(c, lines, blind) if abs(err) > u]
    assert [i for i, _, _ in missed] == [k], missed  # the test can fail

    # The host was unresponsive from 11.6 ms before that stamp until it.
    t = chunks[k].t_ns
    check = reader([[t - round(11.6e-3 * 1e9), t]])
    tb = build_timebase(scan, lines, POWER_ON_NS, BAUD, None, chunks, check)
    assert sorted(tb.host.reads.lines) == [k]
    assert tb.host.to_model().reads.late_max_s == pytest.approx(PROBE_S + 11.6e-3)
    for i, err, u in covered(c, lines, tb):
        assert abs(err) <= u, (i, err, u)
    # Placed by its arrival all the same (most reads in a held window are on time),
    # stated with the lateness it may have.
    err, u = next((e, u) for i, e, u in covered(c, lines, tb) if i == k)
    assert 10e-3 < err <= u < 12e-3 + 2 * PROBE_S + 4e-3


def test_a_late_anchor_does_not_widen_the_band() -> None:
    """A printk-stamped line read 2.5 ms late at a 1 ms latency timer is an anchor of
    the band unless the reader says it was late: it would stretch every arrival-timed
    line's band to 3 ms."""
    k = len(uboot()) + 15
    c, chunks, merged = read_late(k, 2.5e-3)
    lines = split_lines(chunks)
    scan = scan_of(c)
    wide = build_timebase(scan, lines, POWER_ON_NS, BAUD, None, chunks).host
    assert wide.high_s - wide.low_s > 2.5e-3  # the test can fail

    t = chunks[k].t_ns
    check = reader([[t - round(2.2e-3 * 1e9), t]])
    tb = build_timebase(scan, lines, POWER_ON_NS, BAUD, None, chunks, check)
    assert tb.host.high_s - tb.host.low_s < 1.6e-3
    assert tb.host.anchors == wide.anchors - len(merged)
    for i, err, u in covered(c, lines, tb):
        assert abs(err) <= u, (i, err, u)


def test_the_stated_read_bound_is_the_readers() -> None:
    """The reader's own bound replaces the assumed one; a run.json without the check, or
    a reader with no bound (rfc2217://), gets the assumed READ_JITTER_S."""
    c = console(boot(), True, 1e-3, 62, seed=5)
    chunks = [Chunk(ln.t_ns, ln.raw + b"\r\n") for ln in c.lines]
    lines = split_lines(chunks)
    bounds = {
        "none": build_timebase(None, lines, POWER_ON_NS, BAUD, None, chunks).host,
        "pyserial": build_timebase(
            None, lines, POWER_ON_NS, BAUD, None, chunks, reader([], bound_s=None)
        ).host,
        "tight": build_timebase(
            None, lines, POWER_ON_NS, BAUD, None, chunks, reader([], bound_s=0.4e-3)
        ).host,
    }
    assert bounds["none"].reads.bound_s == bounds["pyserial"].reads.bound_s == READ_JITTER_S
    assert not bounds["none"].reads.measured and bounds["tight"].reads.measured
    k = len(uboot()) + 33
    u_none = bounds["none"].place(lines[k])[1]
    u_tight = bounds["tight"].place(lines[k])[1]
    assert u_none - u_tight == pytest.approx(READ_JITTER_S - 0.4e-3)


@pytest.mark.parametrize("reference", ["host", "analyzer"])
def test_a_boot_read_late_throughout_keeps_its_anchors(reference: str) -> None:
    """A window over the whole boot (a host busy all along) leaves no anchor read on
    time: the band is still learned from all of them, as without the check, not
    assumed at the FTDI default of 16 ms; only the stated uncertainties grow."""
    c = console(boot(), True, 1e-3, 62, seed=6)
    chunks = [Chunk(ln.t_ns, ln.raw + b"\r\n") for ln in c.lines]
    lines = split_lines(chunks)
    scan = scan_of(c) if reference == "analyzer" else None
    plain = build_timebase(scan, lines, POWER_ON_NS, BAUD, None, chunks).host
    check = reader([[POWER_ON_NS, chunks[-1].t_ns]])
    tb = build_timebase(scan, lines, POWER_ON_NS, BAUD, None, chunks, check)
    assert len(tb.host.reads.lines) == len(lines)
    assert (tb.host.low_s, tb.host.high_s) == (plain.low_s, plain.high_s)
    assert tb.host.high_s - tb.host.low_s < 5e-3
    for i, err, u in covered(c, lines, tb):
        assert abs(err) <= u, (i, err, u)
