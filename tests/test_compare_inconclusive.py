"""`inconclusive` (issue 22 item 6): a comparison whose boots cannot reach a verdict says
so, with the boots a change of the size it saw needs, instead of `no_change`. The rule on
small samples, the false `inconclusive` rate on the simulator's timing model, two real
5-cycle soaks of the simulated board 50 ms apart in the kernel through `rig compare`,
and Robot's `Stage Should Not Regress` in a real Robot run (docs/compare.md)."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from robot.api import ExecutionResult
from robot.libdoc import libdoc
from robot.run import run as robot_run
from scipy import stats

from rig.compare.stats import (
    INCONCLUSIVE,
    NO_CHANGE,
    SLOWER,
    UNCONFIRMED,
    UNDERPOWERED,
    UNREACHABLE,
    Settings,
    compare,
    compare_all,
)
from tests.e2e import REPO, make_config
from tests.test_compare import FAST, _sim_side

KERNEL_S = 0.12  # the fast board's kernel stage (config/boards/fast.toml)
STEP_S = 0.050  # the change: +50 ms on the kernel


def rig(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rig", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )


# -- the rule ------------------------------------------------------------------------------

BEFORE = [0.1201, 0.1188, 0.1213, 0.1196]
AFTER = [0.1702, 0.1689, 0.1718, 0.1695]  # +50 ms, every after boot above every before


def test_four_against_four_with_six_stages_cannot_reach_a_verdict() -> None:
    """The issue's case: 4 against 4 boots at alpha / 6 (Bonferroni over six names).
    The most extreme ordering gives p = 2 / C(8, 4) = 0.029 > 0.0083: no outcome of these
    boots could say `slower`, so `no_change` would be a claim they cannot back."""
    per_stage = Settings(alpha=0.05 / 6)
    r = compare("kernel", BEFORE, AFTER, per_stage)
    assert r.p_value == pytest.approx(2 / math.comb(8, 4))
    assert r.difference_s == pytest.approx(0.0500, abs=1e-3)
    assert (r.verdict, r.inconclusive_reason) == (INCONCLUSIVE, UNREACHABLE)
    assert r.boots_to_decide == 5  # 2 / C(10, 5) = 0.0079 < 0.0083, and 50 ms >> spread
    assert r.decide_change_s == pytest.approx(r.difference_s)
    assert "cannot reach p < 0.0083" in (r.note or "") and "5 boots a side" in (r.note or "")
    # The same boots judged alone (alpha 0.05) can: 0.029 < 0.05.
    assert compare("kernel", BEFORE, AFTER, Settings()).verdict == SLOWER
    # Three against three never reach 0.05 (2 / 20 = 0.1), whatever they measure.
    few = compare("t", BEFORE[:3], AFTER[:3], Settings())
    assert (few.verdict, few.inconclusive_reason, few.boots_to_decide) == (
        INCONCLUSIVE,
        UNREACHABLE,
        4,
    )
    # A side without the stage: nothing to compare, not "no change".
    empty = compare("t", [], AFTER, Settings())
    assert (empty.verdict, empty.inconclusive_reason, empty.boots_to_decide) == (
        INCONCLUSIVE,
        UNREACHABLE,
        None,
    )


def test_no_change_only_where_the_boots_could_have_seen_one() -> None:
    # Identical boots on both sides: no change at the resolution of the measurement.
    same = compare("t", [0.1] * 5, [0.1] * 5, Settings())
    assert (same.verdict, same.inconclusive_reason) == (NO_CHANGE, None)
    # A difference as large as these boots detect, but p misses alpha: four of five
    # after boots 3.4 ms slower, one stray fast one (heavy tails: a stray boot costs the
    # rank test more than it moves the median shift).
    before = [0.0993, 0.1001, 0.0973, 0.0993, 0.1000]
    after = [0.1034, 0.1041, 0.1021, 0.1033, 0.0908]
    r = compare("t", before, after, Settings())
    assert r.p_value is not None and r.p_value >= 0.05
    assert r.detectable_s is not None and r.difference_s is not None
    assert abs(r.difference_s) >= r.detectable_s
    assert (r.verdict, r.inconclusive_reason) == (INCONCLUSIVE, UNCONFIRMED)
    # The boots to decide it are planned with the rank interval's spread, not the MAD's
    # alone: the MAD ignores the stray boot and would promise a verdict from 4 boots a
    # side, fewer than the 5 that just failed to give one.
    assert r.ci_low_s is not None and r.ci_high_s is not None and r.spread_s is not None
    z_a = stats.norm.ppf(1 - 0.05 / 2)
    sigma = (r.ci_high_s - r.ci_low_s) / 2 * math.sqrt(3 / math.pi) / (z_a * math.sqrt(2 / 5))
    assert sigma > r.spread_s
    z = z_a + stats.norm.ppf(0.8)
    assert r.boots_to_decide == math.ceil(
        2 * (z * sigma / abs(r.difference_s)) ** 2 / (3 / math.pi)
    )
    assert r.boots_to_decide > 5 and f"sigma {sigma * 1e3:.2f} ms" in (r.note or "")
    # ... but not when the difference is under the threshold: no number of boots would
    # make it `slower` (the threshold is judged on the difference, docs/compare.md).
    assert compare("t", before, after, Settings(threshold_s=0.005)).verdict == NO_CHANGE
    # A threshold smaller than what the boots detect: they could not have seen it.
    noisy_b = [0.100, 0.108, 0.095, 0.104, 0.099, 0.111, 0.092, 0.103]
    noisy_a = [0.101, 0.096, 0.109, 0.100, 0.106, 0.093, 0.104, 0.098]
    t = compare("t", noisy_b, noisy_a, Settings(threshold_s=0.002))
    assert t.detectable_s is not None and t.detectable_s > 0.002
    assert (t.verdict, t.inconclusive_reason) == (INCONCLUSIVE, UNDERPOWERED)
    assert t.decide_change_s == pytest.approx(0.002)  # the threshold: the smallest that counts
    # ... and one they could see: the same boots, a 50 ms threshold.
    ok = compare("t", noisy_b, noisy_a, Settings(threshold_s=0.05))
    assert (ok.verdict, ok.inconclusive_reason, ok.boots_to_decide) == (NO_CHANGE, None, None)


def test_identical_profiles_are_rarely_inconclusive() -> None:
    """20 boots a side of identical profiles (the timing model, 400 seed pairs, Bonferroni
    over six names): the boots reach every verdict, so `inconclusive` only comes from a
    difference as large as the detectable one that p does not confirm. Measured: 0 of
    400 comparisons (any of six stages), and no `slower`/`faster` turned into it."""
    inconclusive = 0
    for i in range(400):
        a, b = _sim_side(FAST, 20_000 + 2 * i), _sim_side(FAST, 20_001 + 2 * i)
        inconclusive += any(
            r.verdict == INCONCLUSIVE for r in compare_all(list(a), a, b, Settings())
        )
    assert inconclusive <= 4, inconclusive


# -- end to end: two 5-cycle soaks of the simulated board, +50 ms on the kernel ------------


def _soak(tmp: Path, name: str, board: Path, seed: int, cycles: int) -> Path:
    config = make_config(tmp, name=f"{name}.toml", set_keys={"seed": seed})
    config.write_text(config.read_text().replace(str(FAST), str(board)))
    proc = rig("soak", "--config", str(config), "--cycles", str(cycles), "--id", name, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return config


def _slow_kernel(tmp: Path) -> Path:
    text = FAST.read_text()
    assert text.count(f"duration_s = {KERNEL_S}\n") == 1
    path = tmp / "fast-kernel-plus-50ms.toml"
    path.write_text(
        text.replace(f"duration_s = {KERNEL_S}\n", f"duration_s = {KERNEL_S + STEP_S}\n")
    )
    return path


@pytest.fixture(scope="module")
def five_cycle_soaks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("inconclusive")
    _soak(tmp, "before", FAST, seed=1, cycles=5)
    _soak(tmp, "after", _slow_kernel(tmp), seed=2, cycles=5)
    return tmp


@pytest.mark.slow
def test_five_cycle_soaks_are_inconclusive_not_no_change(five_cycle_soaks: Path) -> None:
    tmp = five_cycle_soaks
    cfg = str(tmp / "before.toml")
    proc = rig("compare", "--config", cfg, "before", "--", "after", "--json")
    assert proc.returncode == 4, proc.stdout + proc.stderr  # its own code: CI can tell
    doc = json.loads(proc.stdout)
    stages = {s["name"]: s for s in doc["stages"]}
    k = stages["kernel"]
    assert (k["n_before"], k["n_after"]) == (4, 4)  # the warm-up cycle left out
    assert k["difference_s"] == pytest.approx(STEP_S, abs=0.004)
    assert k["p_value"] == pytest.approx(2 / math.comb(8, 4), rel=1e-6)
    assert (k["verdict"], k["inconclusive_reason"]) == ("inconclusive", "unreachable")
    assert k["boots_to_decide"] == 5 and k["decide_change_s"] == k["difference_s"]
    # No stage can reach a verdict with 4 against 4 at 0.05 / 6: none says no_change.
    assert {s["verdict"] for s in doc["stages"]} == {"inconclusive"}
    assert doc["regressions"] == [] and doc["inconclusive"] == list(stages)
    assert rig("compare", "--config", cfg, "before", "--", "after", "--fail-inconclusive",
               "--json").returncode == 1  # fmt: skip
    # Judged alone (no correction) the same boots do reach it: slower, exit 1.
    alone = rig("compare", "--config", cfg, "before", "--", "after", "--correction", "none",
                "--json")  # fmt: skip
    assert alone.returncode == 1
    assert {s["name"]: s for s in json.loads(alone.stdout)["stages"]}["kernel"]["verdict"] == (
        "slower"
    )
    text = rig("compare", "--config", cfg, "before", "--", "after")
    assert text.returncode == 4
    assert "inconclusive" in text.stdout and "needs 5 boots a side" in text.stdout, text.stdout


# -- Robot: Stage Should Not Regress -------------------------------------------------------


@pytest.mark.slow
def test_robot_keyword_fails_warns_or_passes_on_inconclusive(
    five_cycle_soaks: Path, tmp_path: Path
) -> None:
    """A suite soaks the +50 ms board 4 cycles (3 count) against the 5-cycle baseline (4
    count): at alpha 0.05 the most extreme p is 2 / C(7, 3) = 0.057, so the keyword can
    never find the regression; by default it fails saying so, `inconclusive=warn` passes
    with a warning, `inconclusive=pass` passes."""
    tmp = five_cycle_soaks
    config = make_config(tmp_path, set_keys={"seed": 3})
    config.write_text(
        config.read_text().replace(str(FAST), str(tmp / "fast-kernel-plus-50ms.toml"))
    )
    baseline = tmp / "results" / "before"
    suite = tmp_path / "suite.robot"
    suite.write_text(
        "*** Settings ***\n"
        f"Library    rig.robot.BootRig    config={config}\n\n"
        "*** Test Cases ***\n"
        "Soak\n    Run Soak    cycles=4\n"
        f"Default Fails\n    Stage Should Not Regress    kernel    baseline={baseline}\n"
        f"Warn\n    ${{r}}=    Stage Should Not Regress    kernel    baseline={baseline}"
        "    inconclusive=warn\n    Should Be Equal    ${r}[verdict]    inconclusive\n"
        "    Should Be Equal As Integers    ${r}[boots_to_decide]    4\n"
        f"Pass\n    Stage Should Not Regress    kernel    baseline={baseline}"
        "    inconclusive=PASS\n"
        f"Bad Choice\n    Stage Should Not Regress    kernel    baseline={baseline}"
        "    inconclusive=maybe\n"
    )
    out = tmp_path / "out"
    robot_run(str(suite), outputdir=str(out), stdout=io.StringIO(), stderr=io.StringIO())
    result = ExecutionResult(str(out / "output.xml"))
    tests = {t.name: (t.status, t.message) for t in result.suite.all_tests}
    assert tests["Soak"][0] == "PASS", tests
    status, msg = tests["Default Fails"]
    assert status == "FAIL", tests
    assert msg.startswith("Stage 'kernel' inconclusive: +"), msg
    assert "3 measured boots" in msg and f"against 4 of baseline {baseline}" in msg, msg
    assert "cannot reach p < 0.05" in msg and "needs 4 boots a side" in msg, msg
    assert tests["Warn"] == ("PASS", ""), tests
    assert tests["Pass"] == ("PASS", ""), tests
    status, msg = tests["Bad Choice"]
    assert status == "FAIL" and "Available: 'FAIL', 'PASS' and 'WARN'" in msg, msg
    warnings = [m.message for m in result.errors.messages if m.level == "WARN"]
    assert any(w.startswith("Stage 'kernel' inconclusive: +") for w in warnings), warnings


def test_libdoc_lists_the_inconclusive_choices(tmp_path: Path) -> None:
    out = tmp_path / "BootRig.json"
    libdoc("rig.robot.BootRig", str(out), format="JSON", quiet=True)
    spec = json.loads(out.read_text())
    (kw,) = (k for k in spec["keywords"] if k["name"] == "Stage Should Not Regress")
    (arg,) = (a for a in kw["args"] if a["name"] == "inconclusive")
    assert arg["defaultValue"] == "FAIL"  # Robot matches the names in any case
    (typedoc,) = (t for t in spec["typedocs"] if t["name"] == arg["type"]["name"])
    assert typedoc["type"] == "Enum"
    assert [m["name"] for m in typedoc["members"]] == ["FAIL", "WARN", "PASS"]
