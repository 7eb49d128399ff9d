"""bench/lab_scale.py measures what it says: one cycle on two places of a real labgrid lab
gives figures that agree with each other and with the database (correctness, not speed),
and its verdict follows the issue's targets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.lab_scale import judge, measure
from rig.sinks.influx.server import private_server
from tests.labgrid_boards import boards
from tests.labgrid_lab import require_labgrid


@pytest.mark.slow
def test_two_places_one_cycle_figures_agree(tmp_path: Path) -> None:
    require_labgrid()
    with private_server(tmp_path / "influxd") as srv, boards(tmp_path, ["fast.toml"] * 2) as bl:
        f = measure(bl, srv, 2, 1, tmp_path)
    assert f["cycles_run"] == f["ok"] == 2 and f["exit_code"] == 0, f
    assert f["boots_per_min"] == pytest.approx(2 / (f["wall_s"] / 60))
    assert f["overhead_p50_max_s"] >= f["overhead_p50_s"] > 0
    # Every ok boot wrote one boot point and its stages; each place's soak one soak point.
    points = f["points"]
    assert points["boot"] == 2 and points["soak"] == 2 and points["stage"] % 2 == 0
    assert f["points_per_boot"] == (sum(points.values()) - 2) / 2
    assert f["bytes_per_boot"] > 0 and f["bytes_per_soak"] > 0
    assert 0.0 <= f["cpu_busy"] <= 1.0 and f["cpu_busy_own"] > 0
    assert f["cpu_s"]["rig"] > 0 and set(f["cpu_s"]) == set(f["cpu_s_per_boot"])


def _fig(n: int, bpm: float, overhead: float, busy: float = 0.5) -> dict[str, Any]:
    return {"n": n, "boots_per_min": bpm, "overhead_p50_s": overhead, "cpu_busy": busy,
            "cycles_run": 3 * n, "cycles_per_place": 3}  # fmt: skip


def test_verdict_follows_the_targets() -> None:
    good = {1: _fig(1, 80, 0.1), 2: _fig(2, 150, 0.11), 4: _fig(4, 280, 0.19)}
    v = judge(good)
    assert all(v["checks"].values()) and v["ratio"] == pytest.approx(1.9)
    # Throughput flat from 2 to 4 is fine only when the cores were the limit at 4.
    flat = {**good, 4: _fig(4, 150, 0.12, busy=0.95)}
    assert judge(flat)["checks"]["grows_2_to_4_or_cores_limit"]
    assert not judge({**good, 4: _fig(4, 150, 0.12)})["checks"]["grows_2_to_4_or_cores_limit"]
    assert not judge({**good, 4: _fig(4, 280, 0.21)})["checks"]["overhead_4_within_2x_of_1"]
    assert not judge({**good, 2: _fig(2, 80, 0.1)})["checks"]["grows_1_to_2"]
