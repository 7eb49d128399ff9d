from __future__ import annotations

import pytest

from rig.analysis.clockfit import Anchor, fit
from rig.analysis.hostclock import fit_host


def test_recovers_offset_and_drift() -> None:
    # printk = (t - 0.4) * (1 + 50e-6); the fit maps printk back to t.
    true = [0.5, 0.9, 1.7, 2.2]
    anchors = [Anchor(f"m{i}", (t - 0.4) * (1 + 50e-6), t) for i, t in enumerate(true)]
    f = fit(anchors)
    assert f is not None
    # The crystal prior pulls by its weight against 4 exact anchors over 1.7 s: 0.03 ppm.
    assert f.drift_ppm == pytest.approx(50.0, abs=0.1)
    assert f(1.0 * (1 + 50e-6)) == pytest.approx(1.4, abs=1e-8)
    assert max(abs(r) for r in f.residuals) < 1e-7
    assert 1e-6 <= f.uncertainty(1.0) < 20e-6


def test_single_anchor_assumes_no_drift_and_says_so() -> None:
    f = fit([Anchor("bootm", 0.1, 0.6)])
    assert f is not None and f.slope == 1.0
    assert f(0.2) == pytest.approx(0.7)
    assert f.uncertainty(10.0) > f.uncertainty(0.1)


def test_no_anchor() -> None:
    assert fit([]) is None


def test_host_band_centres_latency() -> None:
    # Arrivals 1..3 ms after the true times; a line arriving at 12.002 s host maps to
    # 2.0 s reference within the stated uncertainty.
    pairs = [(int((10 + t + lat) * 1e9), t) for t, lat in ((0.1, 1e-3), (0.5, 3e-3), (0.9, 2e-3))]
    hm = fit_host(pairs, char_s=10 / 115200)
    assert hm is not None
    assert abs(hm.to_ref(int(12.002e9)) - 2.0) <= hm.uncertainty_s
    # Three anchors see little of the band: it is widened, never narrowed.
    assert hm.uncertainty_s > 1e-3 + 10 / 115200


def test_host_band_covers_uniform_latency() -> None:
    import random

    rnd = random.Random(3)
    misses = 0
    trials = 2000
    for _ in range(trials):
        pairs = [(int((5 + t + rnd.uniform(0, 1e-3)) * 1e9), t) for t in range(17)]
        hm = fit_host(pairs, char_s=0.0)
        assert hm is not None
        lat = rnd.uniform(0, 1e-3)
        misses += abs(hm.to_ref(int((5 + 40 + lat) * 1e9)) - 40) > hm.uncertainty_s
    assert misses / trials < 0.02


def test_outlier_anchor_is_rejected_and_reported() -> None:
    anchors = [Anchor(f"m{i}", t - 0.4, t) for i, t in enumerate([0.5, 0.9, 1.3, 1.7, 2.1])]
    anchors[2] = Anchor("late", 0.9 + 0.003, 1.3)  # a hook that printed 3 ms late
    f = fit(anchors)
    assert f is not None
    assert [a.name for a in f.rejected] == ["late"]
    assert f(1.0) == pytest.approx(1.4, abs=1e-9)
    assert f.to_model().rejected[0].name == "late"


def test_two_close_anchors_do_not_claim_a_drift_they_cannot_measure() -> None:
    """Two kernel hooks 62 ms apart with 20 us of jitter between them (the QEMU target):
    a line through them alone tilts by 350 ppm. The crystal prior keeps the slope, and a
    userspace tag stamped milliseconds after its edge is set apart, not fitted."""
    anchors = [
        Anchor("do_mount_root", 0.227377, 0.560857),
        Anchor("kernel_init", 0.289222, 0.622724 + 20e-6),
        Anchor("ui_ready", 0.559455, 0.890919, late_s=12e-3),
    ]
    f = fit(anchors)
    assert f is not None
    assert abs(f.drift_ppm) < 20 and f.rate_uncertainty * 1e6 <= 100
    assert [a.name for a in f.late] == ["ui_ready"]
    assert [a.name for a in f.anchors] == ["do_mount_root", "kernel_init"]


def test_late_stamps_alone_state_the_bias() -> None:
    """A stock kernel: the userspace tag is the only anchor; its edge was up to 12 ms
    before its stamp, so the map takes the middle and states the other half."""
    f = fit([Anchor("ui_ready", 2.0, 3.0, late_s=12e-3)])
    assert f is not None and f.bias_u == pytest.approx(6e-3)
    assert f(2.0) == pytest.approx(3.006)
    for edge_delay in (0.0, 12e-3):  # the truth at either end of the bound is covered
        assert abs(f(2.0) - (3.0 + edge_delay)) <= f.uncertainty(2.0)
