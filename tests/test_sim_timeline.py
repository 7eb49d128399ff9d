"""The planned boot: synchronous console, printk clock, markers, initcalls, boundaries."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from simboard.timeline import Timeline, load, plan

BOARDS = Path(__file__).resolve().parents[1] / "config" / "boards"
PRINTK = re.compile(r"^\[\s*(\d+)\.(\d{6})\] ")


@pytest.fixture(scope="module")
def fast() -> Timeline:
    return plan(load(BOARDS / "fast.toml"), seed=11, boot=2)


@pytest.fixture(scope="module")
def baseline() -> Timeline:
    return plan(load(BOARDS / "ecovec-baseline.toml"), seed=11, boot=0)


def test_lines_rebuild_the_stream(fast: Timeline) -> None:
    data = fast.data
    assert data.endswith(b"\r\n")
    for ln in fast.lines:
        raw = ln.text.encode() + b"\r\n"
        assert data[ln.offset : ln.offset + len(raw)] == raw
    assert len(fast.byte_t) == len(data)


def test_console_is_synchronous_at_the_baud_rate(baseline: Timeline) -> None:
    byte = 10 / 115200
    gaps = baseline.byte_t[1:] - baseline.byte_t[:-1]
    assert gaps.min() == pytest.approx(byte, rel=1e-9)  # never faster than the wire
    for ln in baseline.lines:  # a line starts when the CPU issues it (the UART is idle)
        assert baseline.byte_t[ln.offset] == pytest.approx(ln.t_s, abs=1e-12)
    assert baseline.end_s == pytest.approx(baseline.byte_t[-1] + byte)


def test_printk_timestamps_follow_the_drifting_kernel_clock(fast: Timeline) -> None:
    rate = 1 + fast.drift_ppm * 1e-6
    stamped = [ln for ln in fast.lines if ln.printk_ts is not None]
    assert len(stamped) >= 10
    for ln in stamped:
        m = PRINTK.match(ln.text)
        assert m, ln.text
        printed = int(m.group(1)) + int(m.group(2)) / 1e6
        assert printed == ln.printk_ts
        exact = fast.offset_s + (ln.event_s - fast.kernel_start_s) * rate
        assert 0 <= exact - printed < 1e-6 + 1e-12  # floored to whole microseconds


def test_markers_toggle_then_print_their_tag(fast: Timeline, baseline: Timeline) -> None:
    for tl in (fast, baseline):
        for name, t in tl.markers.items():
            tag = next(ln for ln in tl.lines if ln.text.endswith(f"bootrig: marker {name}"))
            assert 0 < tag.event_s - t < 20e-6  # hook delay of a few microseconds
            assert (tag.printk_ts is None) == (name == "bootm")  # U-Boot prints plain


def test_stage_boundaries(fast: Timeline) -> None:
    s = {span.name: span for span in fast.stages}
    m = fast.markers
    assert s["bootloader"].start_s == 0.0
    assert s["bootloader"].end_s == m["bootm"] == s["kernel"].start_s
    assert s["kernel"].end_s == m["do_mount_root"]
    assert s["rootfs_mount"].end_s == m["kernel_init"]
    app = next(ln for ln in fast.lines if "Starting application" in ln.text)
    assert s["init"].end_s == app.t_s
    assert s["application"].end_s == m["ui_ready"]


def test_initcall_debug_lines_in_2631_style(baseline: Timeline) -> None:
    texts = [PRINTK.sub("", ln.text) for ln in baseline.lines]
    calls = [t for t in texts if t.startswith("calling  ")]
    rets = [t for t in texts if t.startswith("initcall ")]
    assert len(calls) == len(rets) >= 24
    assert re.fullmatch(r"calling  arch_setup\+0x0/0x6a4 @ 1", calls[7])
    m = re.fullmatch(r"initcall (\w+)\+0x0/0x[0-9a-f]+ returned 0 after (\d+) usecs", rets[7])
    assert m and m.group(1) == "arch_setup"
    # ns >> 10 of a drifting 10.83 ms call: 2.3 % under the microseconds.
    assert int(m.group(2)) == pytest.approx(10830 * 1e3 / 1024, rel=0.03)
    # the time passes between the two lines
    i = next(i for i, ln in enumerate(baseline.lines) if "calling  r8a66597_init" in ln.text)
    call, ret = baseline.lines[i], baseline.lines[i + 1]
    line_s = (len(call.text) + 2) * 10 / 115200
    assert ret.t_s - call.t_s - line_s == pytest.approx(0.0554, rel=0.05)


def test_countdown_takes_its_seconds(baseline: Timeline) -> None:
    ln = next(ln for ln in baseline.lines if ln.text.startswith("Hit any key"))
    nxt = baseline.lines[baseline.lines.index(ln) + 1]
    assert nxt.t_s - ln.t_s == pytest.approx(2.0, abs=0.01)


def test_kernel_clock_starts_at_the_kernel_start_step(fast: Timeline) -> None:
    start = next(ln for ln in fast.lines if ln.text == "Starting kernel ...")
    first = next(ln for ln in fast.lines if ln.printk_ts is not None)
    assert start.t_s < fast.kernel_start_s < first.event_s
    assert math.isclose(fast.kernel_start_s, first.event_s - first.printk_ts, abs_tol=2e-6)


def test_bytes_sent_by(fast: Timeline) -> None:
    t = fast.lines[3].t_s
    assert fast.bytes_sent_by(t) == fast.lines[3].offset
    assert fast.bytes_sent_by(fast.end_s) == len(fast.data)
