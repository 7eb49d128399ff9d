"""The simulated console's truth says when each line's bytes really reached the host
(issue 21): the simulator is a process on a shared host, and a busy one writes a USB
transfer later than its adapter model says. No rig can tell that from a slow adapter,
so truth.json records it (`due_ns` from the model, `written_ns` as it happened)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from simboard import truth
from simboard.board import Board
from simboard.capture import Arming
from simboard.console import ConsolePort
from simboard.timeline import load
from simboard.usbserial import transfers

BOARDS = Path(__file__).resolve().parents[1] / "config" / "boards"


def _read_all(fd: int, n: int, out: bytearray) -> None:
    deadline = time.monotonic() + 10
    while len(out) < n and time.monotonic() < deadline:
        out += os.read(fd, 4096)


def test_truth_records_when_the_bytes_were_written() -> None:
    """A board whose relay closed 60 ms before the simulator got to plan its console:
    the transfers due meanwhile can only be written late, and the truth says how late;
    the later ones are written when due."""
    profile = load(BOARDS / "fast.toml")
    port = ConsolePort()
    try:
        board = Board(profile, 3, False, port.submit)
        frame_ns = time.monotonic_ns() - 60_000_000
        board.frame(1, 1, frame_ns)
        submitted = time.monotonic_ns()
        boot = board.boots[0]
        got = bytearray()
        reader = threading.Thread(
            target=_read_all, args=(port.pty.slave, len(boot.timeline.data), got)
        )
        reader.start()
        reader.join(timeout=15)
        assert bytes(got) == boot.timeline.data
        sent = port.deliveries(0)
        stop = time.monotonic_ns()
        doc = truth.truth(
            profile, "fast", 3, board.boots, Arming(frame_ns - 1, 1_000_000, {}), stop, {0: sent}
        )
    finally:
        port.close()
    c = profile.console
    plan, _ = transfers(
        boot.arrivals_ns(),
        boot.timeline.data,
        c.usb_latency_ms * 1e6,
        c.usb_buffer_bytes,
        boot.usb_anchor_ns,
    )
    assert [(d.due_ns, d.size, d.sent) for d in sent] == [(t, len(b), len(b)) for t, b in plan]
    assert [d.offset for d in sent] == [sum(len(b) for _, b in plan[:i]) for i in range(len(plan))]
    lines = doc["boots"][0]["lines"]
    late = [ln for ln in lines if ln["due_ns"] < submitted]
    assert late and len(late) < len(lines)  # some were due before the plan existed
    for ln in lines:
        d = truth.delivery_of(sent, ln["bytes"])
        assert d is not None and (ln["due_ns"], ln["written_ns"]) == (d.due_ns, d.written_ns)
        assert ln["written_ns"] >= ln["due_ns"]
    for ln in late:  # written once planned, not when the model said
        assert ln["written_ns"] >= submitted
    worst = max(submitted - ln["due_ns"] for ln in late)
    assert doc["boots"][0]["console"]["write_late_max_us"] >= worst / 1e3


def _permitted() -> bool:
    out: list[bool] = []

    def probe() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
            out.append(True)
        except OSError:
            out.append(False)

    t = threading.Thread(target=probe)
    t.start()
    t.join()
    return out[0]


def test_the_writer_runs_real_time_where_permitted() -> None:
    """An adapter is hardware: the writer that stands in for it runs at SCHED_FIFO
    where the host permits, and says whether it does (`status` console_realtime)."""
    port = ConsolePort()
    try:
        deadline = time.monotonic() + 5
        while port.realtime is False and _permitted() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert port.realtime is _permitted()
    finally:
        port.close()


def test_a_real_time_writer_sleeps_instead_of_spinning() -> None:
    """At real-time priority the writer's sleep wakes on time; a spin before each
    transfer would take a core from every normal process on the host for as long
    (several simulated boards at once: all of it). 100 transfers 2 ms apart cost the
    process little CPU, and are still written on time."""
    port = ConsolePort()
    try:
        deadline = time.monotonic() + 5
        while not port.realtime and _permitted() and time.monotonic() < deadline:
            time.sleep(0.01)
        got = bytearray()
        reader = threading.Thread(target=_read_all, args=(port.pty.slave, 100, got))
        reader.start()
        # The writer thread's own CPU time: the test's reader and a loaded host's
        # scheduling cost the process more, and are not the writer's spinning.
        writer = time.pthread_getcpuclockid(port._thread.ident or 0)
        cpu = time.clock_gettime(writer)
        start = time.monotonic_ns() + 20_000_000
        port.submit(0, [(start + i * 2_000_000, b"x") for i in range(100)])
        reader.join(timeout=10)
        used = time.clock_gettime(writer) - cpu
        sent = port.deliveries(0)
    finally:
        port.close()
    assert len(sent) == 100 and bytes(got) == b"x" * 100
    if port.realtime:
        assert used < 0.012, used  # spinning 0.2 ms before each: 20 ms and more
