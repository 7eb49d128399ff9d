"""The USB-serial adapter model: full-buffer transfers, latency-timer ticks, never early."""

from __future__ import annotations

import numpy as np
import pytest

from simboard.usbserial import transfers

MS = 1_000_000.0
BYTE_NS = 10 / 115200 * 1e9


def _burst(n: int, t0: float = 0.0) -> tuple[np.ndarray, bytes]:
    return t0 + BYTE_NS * (1 + np.arange(n)), bytes(i % 251 for i in range(n))


def test_a_lone_byte_waits_for_the_next_tick() -> None:
    arrivals = np.array([5.3 * MS])
    out, anchor = transfers(arrivals, b"x", 16 * MS, 62, anchor_ns=0.0)
    assert out == [(round(16 * MS), b"x")]
    assert anchor == 16 * MS


def test_ticks_keep_their_phase_across_idle_time() -> None:
    arrivals = np.array([1.0 * MS, 40.5 * MS])
    out, _ = transfers(arrivals, b"ab", 16 * MS, 62, anchor_ns=0.3 * MS)
    assert [t for t, _ in out] == [round(16.3 * MS), round(48.3 * MS)]


def test_full_buffer_goes_at_once_and_restarts_the_timer() -> None:
    arrivals, data = _burst(200)
    out, _ = transfers(arrivals, data, 16 * MS, 62, anchor_ns=0.0)
    assert [len(d) for _, d in out] == [62, 62, 62, 14]
    assert out[0][0] == pytest.approx(arrivals[61], abs=1)
    assert out[2][0] == pytest.approx(arrivals[185], abs=1)
    assert out[3][0] == pytest.approx(arrivals[185] + 16 * MS, abs=1)  # timer restarted
    assert b"".join(d for _, d in out) == data


def test_never_early_and_late_by_at_most_a_period() -> None:
    rng = np.random.default_rng(1)
    arrivals = np.sort(rng.uniform(0, 500 * MS, 3000))
    data = bytes(rng.integers(0, 256, 3000, dtype=np.uint8))
    out, _ = transfers(arrivals, data, 1 * MS, 62, anchor_ns=-0.58 * MS)
    i = 0
    for t, chunk in out:
        first, last = arrivals[i], arrivals[i + len(chunk) - 1]
        assert t >= last - 1e-6
        assert t - first <= 1 * MS + 1
        assert len(chunk) <= 62
        i += len(chunk)
    assert b"".join(d for _, d in out) == data


def test_continuing_from_the_returned_anchor_equals_one_batch() -> None:
    arrivals, data = _burst(300)
    whole, _ = transfers(arrivals, data, 16 * MS, 62, anchor_ns=0.0)
    cut = 124  # on a full-buffer boundary, so the split is invisible
    first, anchor = transfers(arrivals[:cut], data[:cut], 16 * MS, 62, anchor_ns=0.0)
    rest, _ = transfers(arrivals[cut:], data[cut:], 16 * MS, 62, anchor_ns=anchor)
    assert first + rest == whole
