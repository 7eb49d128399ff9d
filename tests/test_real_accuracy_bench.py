"""bench/real_accuracy.py measures each target on its own (issue 26): which configs a
choice of targets boots, and figures and target_met kept per target and overall. The
boots themselves are the bench's to run (docs/qemu.md); this checks its bookkeeping."""

from __future__ import annotations

from typing import Any

from bench.real_accuracy import TARGETS, plan_targets, verdict
from tests.e2e import REPO


def test_a_target_choice_boots_that_target_only() -> None:
    plan = plan_targets(["linux-6.12-arm64"], [], 3, 0)
    assert plan == [(REPO / "config" / "qemu-arm64-6.12.toml", "linux-6.12-arm64/hooked", 3)]
    # No choice: every known target, 6.1's and 6.12's.
    prefixes = [p for _, p, _ in plan_targets([], [], 1, 0)]
    assert prefixes == [f"{t}/hooked" for t in TARGETS]
    assert {"linux-6.1-arm64", "linux-6.12-arm64", "linux-6.1-armv7"} <= set(TARGETS)
    # The 32-bit target is the armv7 config, hooked only (no stock armv7 images).
    armv7 = plan_targets(["linux-6.1-armv7"], [], 2, 5)
    assert armv7 == [(REPO / "config" / "qemu-armv7.toml", "linux-6.1-armv7/hooked", 2)]


def test_a_config_of_its_own_is_a_target_named_after_it(tmp_path: Any) -> None:
    cfg = tmp_path / "qemu-armv7.toml"
    assert plan_targets([], [cfg], 2, 5) == [(cfg, "qemu-armv7/hooked", 2)]


def row(target: str, source: str, error_s: float, u_s: float, boot: str) -> dict[str, Any]:
    return {
        "target": target,
        "mode": f"{target}/hooked-console",
        "boot": f"{target}/{boot}",
        "marker": "bootm",
        "source": source,
        "error_s": error_s,
        "uncertainty_s": u_s,
    }


def test_a_target_that_misses_fails_on_its_own_and_overall() -> None:
    good = [row("a", "host", 2e-3, 5e-3, "0"), row("a", "landmark", 1e-3, 2e-3, "0")]
    bad = [row("b", "host", 2e-3, 5e-3, "0"), row("b", "landmark", 3e-3, 2e-3, "0")]
    assert verdict(good)["target_met"]
    v = verdict(bad)
    assert not v["target_met"] and v["errors"]["landmark"]["exceeded"] == 1
    assert v["ratio"]["beyond_uncertainty"]["landmark"] == 1.0
    both = verdict(good + bad)
    assert not both["target_met"] and both["boots"] == 2
    # No host-timed boundary at all: the host target is not shown met.
    assert not verdict([row("a", "gpio", 0.0, 1e-6, "0")])["target_met"]
