"""`rig compare` (issue 13 item 1): the statistics on samples with a known shift, the
false-positive rate on the simulator's own timing model, an end-to-end comparison of two
soaks of the simulated board whose kernel stage differs by a known 20 ms, the --json
contract, bad input, and InfluxDB as a source (the real influxd)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from rig.compare.inputs import Source, split
from rig.compare.stats import (
    FASTER,
    INCONCLUSIVE,
    NO_CHANGE,
    SLOWER,
    Settings,
    compare,
    compare_all,
    cut_count,
    u_pmf,
)
from rig.model.report import ColdBoot
from rig.sinks.influx.client import Client
from rig.sinks.influx.deliver import deliver
from rig.sinks.influx.history import read_history
from rig.sinks.influx.select import read_boots
from rig.sinks.influx.server import PrivateServer
from simboard.timeline import load, plan
from tests.e2e import REPO, make_config
from tests.influx_env import influx_server, settings_for  # noqa: F401 - the fixture `server`
from tests.sample_report import sample_report

FAST = REPO / "config" / "boards" / "fast.toml"
SHIFT_S = 0.020  # the slow profile's kernel stage is this much longer (nominal)


def rig(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rig", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


# -- statistics ------------------------------------------------------------------------


def test_exact_u_distribution_matches_scipy() -> None:
    # P(U <= u) from our recurrence against scipy's exact two-sided p of a tie-free sample.
    rng = np.random.default_rng(3)
    a, b = rng.normal(0, 1, 7), rng.normal(0.5, 1, 9)
    u = int(stats.mannwhitneyu(a, b, method="exact").statistic)
    cdf = np.cumsum(u_pmf(7, 9))
    lo = min(u, 63 - u)
    ours = min(1.0, 2 * cdf[lo])
    assert ours == pytest.approx(stats.mannwhitneyu(a, b, method="exact").pvalue, rel=1e-9)
    assert u_pmf(7, 9).sum() == pytest.approx(1.0)
    assert cut_count(3, 3, 0.05, exact=True) == 0  # 3 against 3 cannot reach 95 %


@pytest.mark.parametrize("shift", [-0.015, 0.010, 0.030])
def test_known_shift_direction_and_interval(shift: float) -> None:
    covered = right = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        before = 0.12 + rng.lognormal(-6, 0.5, 25)  # skewed, as boot stages are
        after = 0.12 + shift + rng.lognormal(-6, 0.5, 25)
        r = compare("kernel", before, after, Settings())
        covered += r.ci_low_s is not None and r.ci_low_s <= shift <= r.ci_high_s
        right += r.verdict == (SLOWER if shift > 0 else FASTER)
        assert r.difference_s is not None and (r.difference_s > 0) == (shift > 0)
    assert covered >= 180  # nominal 95 % of 200, with binomial slack
    assert right == 200
    again = compare("k", [0.1, 0.12, 0.11, 0.13, 0.1], [0.2, 0.21, 0.22, 0.2, 0.23], Settings())
    assert again == compare(
        "k", [0.1, 0.12, 0.11, 0.13, 0.1], [0.2, 0.21, 0.22, 0.2, 0.23], Settings()
    )


def test_threshold_power_and_small_samples() -> None:
    rng = np.random.default_rng(1)
    before, after = rng.normal(1.0, 0.01, 30), rng.normal(1.02, 0.01, 30)
    assert compare("t", before, after, Settings()).verdict == SLOWER
    big = compare("t", before, after, Settings(threshold_s=0.1, detect_s=0.005))
    assert big.verdict == NO_CHANGE and "threshold" in (big.note or "")
    # n = 2 ((z_0.975 + z_0.8) sigma / change)^2 / (3 / pi), sigma the pooled MAD spread.
    assert big.spread_s is not None and 0.007 < big.spread_s < 0.013
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert big.boots_needed == math.ceil(2 * (z * big.spread_s / 0.005) ** 2 / (3 / math.pi))
    assert big.detectable_s is not None and 0.005 < big.detectable_s < 0.012
    # Too few boots, or none on a side: the boots cannot tell (issue 22 item 6; more in
    # tests/test_compare_inconclusive.py).
    few = compare("t", [1.0, 1.1], [2.0, 2.1], Settings())
    assert few.verdict == INCONCLUSIVE and few.ci_low_s is None
    assert "2 boots before and 2 after cannot reach p < 0.05" in (few.note or "")
    empty = compare("t", [], [1.0], Settings())
    assert empty.verdict == INCONCLUSIVE and empty.difference_s is None


def _sim_side(profile: Path, seed: int, boots: int = 20) -> dict[str, list[float]]:
    """Stage durations of boots 1.. of a simulator started with `seed`: the simulator's
    own timing model (simboard.timeline), without the instruments."""
    prof = load(profile)
    out: dict[str, list[float]] = {}
    for k in range(1, boots + 1):
        tl = plan(prof, seed, k)
        for s in tl.stages:
            out.setdefault(s.name, []).append(s.end_s - s.start_s)
        out.setdefault("power_to_ui", []).append(tl.markers["ui_ready"])
    return out


#: The false-positive check: trials of identical profiles, and the chance that a correct
#: `rig compare` fails it anyway (each of its seven counts).
FALSE_ALARM_TRIALS = 400
FALSE_ALARM_FAIL_P = 1e-6


def false_alarm_bound(trials: int, alpha: float, fail_p: float = FALSE_ALARM_FAIL_P) -> int:
    """The most false alarms `trials` independent tests at level `alpha` give but with
    probability `fail_p`: the least k with P(X > k) <= fail_p, X ~ Binomial(trials,
    alpha). A test that alarms less often than alpha (an exact, discrete one) only makes
    X smaller."""
    k = int(stats.binom.isf(fail_p, trials, alpha))
    assert stats.binom.sf(k, trials, alpha) <= fail_p < stats.binom.sf(k - 1, trials, alpha)
    return k


def test_identical_profiles_false_alarms_within_the_binomial_bound() -> None:
    """Identical profiles, different seeds: at 95 % confidence with the default
    Bonferroni over the stages, a comparison says slower or faster for some stage in at
    most 5 % of trials; without the correction each stage alone is a 5 % test. So each
    count of false alarms is at most Binomial(400, 0.05)'s bound for a one-in-a-million
    failure (44, where 20 are expected). Without the correction some stage alarms in
    about 20 % of trials (83 of these 400): far over it."""
    trials = FALSE_ALARM_TRIALS
    bound = false_alarm_bound(trials, Settings().alpha)
    alarms = 0
    per_stage: dict[str, int] = {}
    for i in range(trials):
        a, b = _sim_side(FAST, 10_000 + 2 * i), _sim_side(FAST, 10_001 + 2 * i)
        names = list(a)
        alarms += any(r.verdict in (SLOWER, FASTER) for r in compare_all(names, a, b, Settings()))
        for r in compare_all(names, a, b, Settings(), correction="none"):
            per_stage[r.name] = per_stage.get(r.name, 0) + (r.verdict in (SLOWER, FASTER))
    print(f"false alarms of {trials} (bound {bound}): any stage {alarms}, per stage {per_stage}")
    assert len(per_stage) == 6, per_stage
    assert alarms <= bound, (alarms, bound)
    assert max(per_stage.values()) <= bound, (per_stage, bound)


def _slow_profile(tmp: Path) -> Path:
    text = FAST.read_text()
    assert text.count("duration_s = 0.12\n") == 1
    path = tmp / "fast-slow-kernel.toml"
    path.write_text(text.replace("duration_s = 0.12\n", f"duration_s = {0.12 + SHIFT_S}\n"))
    return path


def test_known_shift_on_the_timing_model(tmp_path: Path) -> None:
    slow = _slow_profile(tmp_path)
    covered = 0
    for i in range(40):
        a, b = _sim_side(FAST, 500 + 2 * i), _sim_side(slow, 501 + 2 * i)
        res = {r.name: r for r in compare_all(list(a), a, b, Settings())}
        assert res["kernel"].verdict == SLOWER
        k = res["kernel"]
        covered += k.ci_low_s is not None and k.ci_low_s <= SHIFT_S <= k.ci_high_s
    assert covered >= 36  # the intervals are 99.2 % each (Bonferroni over 6)


# -- end to end on the simulated board ---------------------------------------------------


def _soak(tmp: Path, name: str, board: Path, seed: int, cycles: int = 12) -> None:
    config = make_config(tmp, name=f"{name}.toml", set_keys={"seed": seed})
    text = config.read_text().replace(str(FAST), str(board))
    config.write_text(text)
    proc = rig("soak", "--config", str(config), "--cycles", str(cycles), "--id", name, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def soaks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("compare")
    _soak(tmp, "before", FAST, seed=1)
    _soak(tmp, "after", _slow_profile(tmp), seed=2)
    return tmp


@pytest.mark.slow
def test_soaks_kernel_slower_by_the_known_amount(soaks: Path) -> None:
    html = soaks / "cmp.html"
    proc = rig(
        "compare", "--config", str(soaks / "before.toml"), "before", "--", "after",
        "--json", "--html", str(html), "--detect", "2ms",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a stage is slower: the gate
    doc = json.loads(proc.stdout)
    stages = {s["name"]: s for s in doc["stages"]}
    assert list(stages) == ["bootloader", "kernel", "rootfs_mount", "init", "application",
                            "power_to_ui"]  # fmt: skip
    for s in doc["stages"]:  # the contract's keys (docs/contract.md)
        assert {"name", "difference_s", "ci_low_s", "ci_high_s", "p_value", "verdict"} <= set(s)
    k = stages["kernel"]
    assert k["verdict"] == "slower" and k["ci_low_s"] <= SHIFT_S <= k["ci_high_s"]
    total = stages["power_to_ui"]
    assert total["verdict"] == "slower" and total["ci_low_s"] <= SHIFT_S <= total["ci_high_s"]
    for name in ("bootloader", "rootfs_mount", "init", "application"):
        assert stages[name]["verdict"] == "no_change", stages[name]
    assert doc["regressions"] == ["kernel", "power_to_ui"]
    # The warm-up rule: the first cycle of each soak is shown, not counted.
    for side in ("before", "after"):
        (src,) = doc[side]["sources"]
        assert src["kind"] == "soak" and len(src["warmup"]) == 1 and src["boots"] == 11
    assert stages["kernel"]["n_before"] == 11 and stages["kernel"]["boots_needed"] >= 4
    page = html.read_text()
    assert "Plotly.newPlot" in page and "kernel" in page and doc["html"] == str(html)


@pytest.mark.slow
def test_reversed_is_faster_and_exits_0(soaks: Path) -> None:
    results = soaks / "results"
    proc = rig("compare", str(results / "after"), "--", str(results / "before"), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stages = {s["name"]: s for s in json.loads(proc.stdout)["stages"]}
    assert stages["kernel"]["verdict"] == "faster"
    assert stages["kernel"]["ci_low_s"] <= -SHIFT_S <= stages["kernel"]["ci_high_s"]
    # The terminal table names the verdicts and the warm-up boots.
    text = rig("compare", str(results / "before"), "--", str(results / "after")).stdout
    assert "slower" in text and "warm-up left out" in text


@pytest.mark.slow
def test_run_folders_and_warmup_option(soaks: Path) -> None:
    results = soaks / "results"
    runs = sorted(p for p in (results / "before").iterdir() if (p / "report.json").is_file())
    proc = rig("compare", *map(str, runs[:6]), "--", str(results / "before"), "--warmup", "3",
               "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert [s["kind"] for s in doc["before"]["sources"]] == ["run"] * 6  # never warm-up
    assert len(doc["after"]["sources"][0]["warmup"]) == 3
    assert all(s["verdict"] == "no_change" for s in doc["stages"])  # a subset of itself


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["/no/such/run", "--", "{runs}"], "/no/such/run"),
        (["{runs}", "--"], "after: nothing given"),
        (["{runs}", "{runs}"], "BEFORE... -- AFTER..."),
        (["{runs}", "--", "{runs}", "--warmup", "100"], "no boot counts"),
        (["{runs}", "--", "{runs}", "--detect", "fast"], "--detect 'fast'"),
        (["{runs}", "--", "influx:board=x"], "no [influx] table"),
        (["{runs}", "--", "{runs}", "--alpha", "1.5"], "alpha"),
    ],
)
def test_bad_input_exits_2_naming_it(
    args: list[str], named: str, tmp_path: Path, soaks: Path
) -> None:
    runs = str(soaks / "results" / "before")
    argv = [a.replace("{runs}", runs) for a in args]
    proc = rig("compare", "--config", str(soaks / "before.toml"), *argv, "--json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert named in out and "Traceback" not in out


def test_run_folder_without_report(tmp_path: Path) -> None:
    run = tmp_path / "20250101T000000Z-abcdef"
    run.mkdir()
    (run / "run.json").write_text("{}")
    proc = rig("compare", str(run), "--", str(run))
    assert proc.returncode == 2 and "rig analyze" in proc.stderr and "Traceback" not in proc.stderr


# -- InfluxDB as a source ------------------------------------------------------------------


def _seed(
    settings: Any, tmp: Path, variant: str, first: int, extra_kernel_s: float, place: str = ""
) -> None:
    for i in range(first, first + 15):
        r = sample_report(i, initcalls=2, variant=variant)
        r.place = place or None
        kernel = r.stage("kernel")
        assert kernel is not None and kernel.duration_s is not None
        kernel.duration_s += extra_kernel_s
        r.power_to_ui_s = (r.power_to_ui_s or 0.0) + extra_kernel_s
        assert deliver(r, settings, tmp).status == "written"


def test_influx_source(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    s = settings_for(server, request)
    _seed(s, tmp_path, "baseline", 0, 0.0)
    _seed(s, tmp_path, "optimised", 100, -0.03)
    config = make_config(
        tmp_path, extra=f'\n[influx]\nurl = "{s.url}"\ndatabase = "{s.database}"\n'
    )
    proc = rig(
        "compare", "--config", str(config), "influx:board=ecovec,variant=baseline",
        "--", "influx:board=ecovec,variant=optimised", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    stages = {st["name"]: st for st in doc["stages"]}
    assert list(stages)[:2] == ["bootloader", "kernel"]
    assert stages["kernel"]["verdict"] == "faster"
    assert stages["kernel"]["ci_low_s"] <= -0.03 <= stages["kernel"]["ci_high_s"]
    assert stages["bootloader"]["verdict"] == "no_change"
    src = doc["before"]["sources"][0]
    assert src["kind"] == "influx" and src["boots"] == 14 and len(src["warmup"]) == 1
    missing = rig("compare", "--config", str(config), "influx:board=nope", "--",
                  "influx:board=ecovec", "--json")  # fmt: skip
    assert missing.returncode == 2 and "no boots for this selection" in missing.stdout


def test_influx_source_by_place(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Two labgrid places with boards of one kind (same board and variant): the one on
    b2 boots a 20 ms slower kernel, found by selecting on the place tag."""
    s = settings_for(server, request)
    _seed(s, tmp_path, "optimised", 0, 0.0, place="b1")
    _seed(s, tmp_path, "optimised", 100, 0.02, place="b2")
    config = make_config(
        tmp_path, extra=f'\n[influx]\nurl = "{s.url}"\ndatabase = "{s.database}"\n'
    )
    proc = rig("compare", "--config", str(config), "influx:board=ecovec,place=b1",
               "--", "influx:board=ecovec,place=b2", "--json")  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a stage slower: the CI gate
    kernel = next(st for st in json.loads(proc.stdout)["stages"] if st["name"] == "kernel")
    assert kernel["verdict"] == "slower"
    assert kernel["ci_low_s"] <= 0.02 <= kernel["ci_high_s"]


def test_influx_source_leaves_out_boots_flagged_not_cold(
    server: PrivateServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A boot whose point says it was not a true cold boot (`cold_boot` false) is listed
    as excluded, as from a folder, unless --include-warm; `rig trend`'s history skips it."""
    s = settings_for(server, request)
    for i in range(12):
        r = sample_report(200 + i, initcalls=1, variant="warmcheck")
        if i in (5, 6):
            r.cold_boot = ColdBoot(None, None, None, None, None, None, 1.1, True, False,
                                   ["back_powered: rail at 1.1 V while off"])  # fmt: skip
        assert deliver(r, s, tmp_path).status == "written"
    flagged = {sample_report(205).run_id, sample_report(206).run_id}
    with Client(s) as client:
        boots = read_boots(client, s.database, {"variant": "warmcheck"})
        history = read_history(client, s.database, {"variant": "warmcheck"}, "kernel")
    assert {b.id for b in boots if b.not_cold} == flagged
    source = split(boots, Source("x", "influx", "here"), warmup=1)
    assert {i for i, _ in source.excluded} == flagged and len(source.boots) == 9
    assert len(split(boots, Source("x", "influx", "here"), 1, include_warm=True).boots) == 11
    (kernel,) = history
    assert len(kernel.boots) == 10 and not {b.run_id for b in kernel.boots} & flagged
