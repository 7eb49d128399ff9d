"""The nightly run's one exit code from its steps' (config/nightly/verdict.sh, which
nightly.sh sources), run by the real sh: each step's codes keep their meaning, and
`rig trend`'s 4 (a slower change point the boots cannot confirm yet, issue 22 item 6)
is not taken for a broken rig (2)."""

from __future__ import annotations

import subprocess

import pytest

from tests.e2e import REPO

VERDICT = REPO / "config" / "nightly" / "verdict.sh"


def night(soak: int, robot: int, trend: int, stopped: int = 0) -> int:
    script = f'. "{VERDICT}"; night_exit {soak} {robot} {trend} {stopped}'
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.mark.parametrize(
    ("soak", "robot", "trend", "stopped", "code"),
    [
        (0, 0, 0, 0, 0),
        (0, 0, -1, 0, 0),  # no [influx]: the trend step did not run
        (1, 0, 0, 0, 1),  # the soak's failure rate
        (0, 3, 0, 0, 1),  # three Robot tests failed
        (0, 0, 1, 0, 1),  # a new regression
        (0, 0, 4, 0, 4),  # the trend cannot tell yet: neither ok nor a broken rig
        (1, 0, 4, 0, 1),  # a failure beats "cannot tell"
        (0, 2, 4, 0, 1),
        (0, 0, 2, 0, 2),  # bad config
        (0, 0, 3, 0, 2),  # InfluxDB away
        (2, 0, 4, 0, 2),
        (0, 253, 4, 0, 130),
        (0, 0, 4, 143, 143),
    ],
)
def test_night_exit(soak: int, robot: int, trend: int, stopped: int, code: int) -> None:
    assert night(soak, robot, trend, stopped) == code


def test_nightly_sh_uses_it() -> None:
    text = (REPO / "config" / "nightly" / "nightly.sh").read_text()
    assert '. "$repo/config/nightly/verdict.sh"' in text
    assert 'code=$(night_exit "$soak" "$robot" "$trend" "$stopped")' in text
