"""The soak under fire, short: bench/soak_faults.py with 40 cycles and every fault kind.

Faults in the board at high rates, the real InfluxDB stopped for a fifth of the soak,
the rig SIGKILLed in the middle of that outage and resumed: every cycle must still be
classified (and as the simulator's truth says), none lost, no InfluxDB point missing
or doubled, and no simulated board left running after the kill.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.soak_faults import run

pytestmark = pytest.mark.slow

RATES = {
    "hang": 0.08,
    "panic": 0.05,
    "console_lost": 0.05,
    "missing_marker": 0.05,
    "garbage": 0.05,
    "analyzer": 0.05,
}


def test_every_cycle_accounted_for_through_faults_outage_and_kill(tmp_path: Path) -> None:
    f = run(tmp_path, cycles=40, rates=RATES, boot_s=1.0, say=lambda _s: None)
    assert f["exit_code"] == 0 and f["status"] == "completed"
    assert f["cycles_run"] == f["classified"] == 40
    assert f["lost"] == 0 and f["journal_duplicates"] == 0
    assert f["recovered"] >= 1  # the cycle the kill interrupted has its line too
    assert f["misclassified"] == [] and f["truth_checked"] >= 38
    assert f["influx"]["duplicated"] == 0 and f["influx"]["boots_missing"] == 0
    assert f["influx"]["present"] == f["influx"]["expected"] > 0
    assert f["boards_left_after_kill"] == 0
    # No leak once every kind of cycle has run; a kind's first run loads its code once,
    # a step of several MB that the raw figure (from the warm-up on) still holds.
    assert f["rss"]["growth_mb"] < 10 and f["rss"]["raw_mb"] < 20, f["rss"]
    assert f["overhead"]["run_json_median_s"] < 0.3  # the bench holds the real target
