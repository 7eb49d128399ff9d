"""`rig cost` (issue 13 item 2): the simulated board's instrumentation options and their
known cost, the boot order, the variant syntax, and the command end to end on the
simulator finding a known cost in the right stage (and none where there is none)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rig.analysis.choices import OFF, ON
from rig.cost.run import parse_variant, parse_variants, variant_configs
from rig.cost.stats import schedule
from rig.errors import InputError
from simboard.instrumentation import Instrumentation
from simboard.timeline import load, plan
from tests.e2e import REPO, make_config

BOARDS = REPO / "config" / "boards"
FAST = BOARDS / "fast.toml"


def _durations(profile: Any, **switches: Any) -> dict[str, float]:
    p = profile.with_overrides(**switches)
    return {s.name: s.duration_s for s in plan(p, 0, 0, nominal=True).stages}


def _initcall_bytes(profile: Any) -> int:
    tl = plan(profile, 0, 0, nominal=True)
    return sum(
        len(ln.text) + 2 for ln in tl.lines if "calling  " in ln.text or " returned " in ln.text
    )


@pytest.mark.parametrize("board", sorted(p.name for p in BOARDS.glob("*.toml")))
def test_profiles_as_written_boot_as_before(board: str) -> None:
    """No [instrumentation] table, or its values as written: the same boot, byte for byte."""
    p = load(BOARDS / board)
    assert p.instrumentation == Instrumentation()
    same = p.with_overrides(quiet=False)
    for seed, boot in ((0, 0), (3, 7)):
        a, b = plan(p, seed, boot), plan(same, seed, boot)
        assert a.data == b.data and a.stages == b.stages and a.markers == b.markers


def test_initcall_debug_costs_exactly_its_console_time() -> None:
    p = load(FAST)
    on, off = _durations(p, initcall_debug=True), _durations(p, initcall_debug=False)
    byte_s = 10 / p.console.baud
    cost = {k: on[k] - off[k] for k in on}
    assert cost["kernel"] == pytest.approx(_initcall_bytes(p) * byte_s, abs=1e-9)
    assert cost["kernel"] == pytest.approx(0.03316, abs=1e-5)
    assert all(cost[k] == pytest.approx(0, abs=1e-12) for k in cost if k != "kernel")
    # The optimised Ecovec has initcall_debug off as written: switching it on costs.
    eco = load(BOARDS / "ecovec-optimised.toml")
    assert _durations(eco, initcall_debug=True)["kernel"] > eco.stages[1].duration_s


def test_quiet_removes_printk_lines_but_not_tags_or_plain_lines() -> None:
    p = load(FAST).with_overrides(quiet=True)
    tl = plan(p, 0, 0, nominal=True)
    printk = [ln.text for ln in tl.lines if ln.printk_ts is not None]
    assert printk and all("bootrig: marker" in t for t in printk)
    assert any("Starting application" in ln.text for ln in tl.lines)
    assert any("U-Boot" in ln.text for ln in tl.lines)
    cost = {k: v - _durations(load(FAST), quiet=True)[k] for k, v in _durations(load(FAST)).items()}
    assert cost["bootloader"] == 0 and cost["application"] == 0
    assert cost["kernel"] == pytest.approx(0.059635, abs=1e-6)
    assert cost["rootfs_mount"] > 0 and cost["init"] > 0


def test_same_factors_differ_by_the_planned_cost_only() -> None:
    """With run-to-run variance, boot k with instrumentation on and off differ by exactly
    the planned cost (console time is not scaled), up to a digit of `after N usecs`."""
    p = load(FAST)
    planned = {k: v - _durations(p, initcall_debug=False)[k] for k, v in _durations(p).items()}
    for boot in range(20):
        a = plan(p, 5, boot)
        b = plan(p.with_overrides(initcall_debug=False), 5, boot)
        for sa, sb in zip(a.stages, b.stages, strict=True):
            assert sa.duration_s - sb.duration_s == pytest.approx(planned[sa.name], abs=2e-4)


def test_profile_table_and_errors(tmp_path: Path) -> None:
    text = FAST.read_text() + "\n[instrumentation]\nquiet = true\ninitcall_debug = false\n"
    path = tmp_path / "b.toml"
    path.write_text(text)
    assert load(path).instrumentation == Instrumentation(quiet=True, initcall_debug=False)
    path.write_text(FAST.read_text() + '\n[instrumentation]\ninitcall_debug = "yes"\n')
    with pytest.raises(Exception, match=r"instrumentation.initcall_debug"):
        load(path)


def test_schedule_is_balanced_and_reproducible() -> None:
    for order in ("random", "abba", "abab"):
        for pairs in (1, 4, 5, 12):
            s = schedule(pairs, order, 3)
            assert s.count(ON) == s.count(OFF) == pairs
    assert schedule(6, "abba") == [ON, OFF, OFF, ON] * 3
    assert schedule(3, "abab") == [ON, OFF] * 3
    assert schedule(8, "random", 1) == schedule(8, "random", 1)
    assert len({tuple(schedule(8, "random", s)) for s in range(10)}) > 1
    # A linear drift cancels within every block of two pairs (abba and random).
    for order in ("abba", "random"):
        s = np.array(schedule(10, order, 7)[:8])
        idx = np.arange(len(s))
        assert idx[s == ON].sum() == idx[s == OFF].sum()


def test_variant_syntax() -> None:
    v = parse_variant('on:qemu.kernel_args="initcall_debug loglevel=8",timeouts.boot_s=10')
    assert v.name == "on"
    assert v.overrides == ('qemu.kernel_args="initcall_debug loglevel=8"', "timeouts.boot_s=10")
    assert parse_variant('off:sim.quiet=true,qemu.kernel_args="a,b=c"').overrides == (
        "sim.quiet=true",
        'qemu.kernel_args="a,b=c"',
    )
    assert parse_variant("off:").overrides == ()
    for bad in ("on", "maybe:sim.quiet=true", "on:sim.quiet", "on:=1", "on:sim quiet=1"):
        with pytest.raises(InputError, match="--variant"):
            parse_variant(bad)
    with pytest.raises(InputError, match="given twice"):
        parse_variants(["on:", "on:sim.quiet=true"])
    with pytest.raises(InputError, match="no 'off' variant"):
        parse_variants(["on:"])


def test_on_variant_boots_from_the_next_seed_unless_it_sets_one(tmp_path: Path) -> None:
    """Two simulators with one seed would repeat each other's variance boot for boot."""
    config = make_config(tmp_path, set_keys={"seed": 5})
    cfgs = variant_configs(config, parse_variants(["on:", "off:"]))
    assert (cfgs[ON].sim.seed, cfgs[OFF].sim.seed) == (6, 5)  # type: ignore[union-attr]
    cfgs = variant_configs(config, parse_variants(["on:sim.seed=9", "off:"]))
    assert (cfgs[ON].sim.seed, cfgs[OFF].sim.seed) == (9, 5)  # type: ignore[union-attr]


def _cost(config: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rig", "cost", "--config", str(config), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("variant", "named"),
    [
        ("on", "'on'"),
        ("on:sim.quiet", "'sim.quiet'"),
        ("both:sim.quiet=true", "'both:sim.quiet=true'"),
        ("on:sim.quiet=maybe", "sim.quiet"),
        ("on:sim.loud=true", "sim.loud"),
    ],
)
def test_bad_variant_exits_2_naming_it(tmp_path: Path, variant: str, named: str) -> None:
    config = make_config(tmp_path)
    proc = _cost(config, "--variant", variant, "--variant", "off:", "--json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = json.loads(proc.stdout)
    assert named in err["error"] and err["exit_code"] == 2
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


@pytest.mark.slow
def test_cost_finds_initcall_debug_in_the_kernel(tmp_path: Path) -> None:
    """The simulator's truth: initcall_debug costs the kernel stage (and power-to-UI)
    33.16 ms and nothing else; 6 pairs find it there with intervals covering the truth."""
    config = make_config(tmp_path)
    proc = _cost(
        config,
        "--variant", "on:sim.initcall_debug=true",
        "--variant", "off:sim.initcall_debug=false",
        "--pairs", "6", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    folder = Path(doc["folder"])
    truth = {}
    for v in (ON, OFF):
        t = json.loads(next(folder.glob(f"{v}-0001")).joinpath("truth.json").read_text())
        truth[v] = t["instrumentation"]["planned_s"]
        assert t["instrumentation"]["initcall_debug"] is (v == ON)
    true_cost = {k: truth[ON][k] - truth[OFF][k] for k in truth[ON]}
    true_cost["power_to_ui"] = sum(true_cost.values())
    stages = {s["name"]: s for s in doc["stages"]}
    assert list(stages) == [*truth[ON], "power_to_ui"]
    for name, s in stages.items():
        assert set(s) >= {"name", "cost_s", "ci_low_s", "ci_high_s", "p_value", "verdict"}
        assert s["ci_low_s"] <= true_cost[name] <= s["ci_high_s"], (name, s, true_cost[name])
        assert s["verdict"] == ("costs" if name in ("kernel", "power_to_ui") else "no_cost")
    assert doc["pairs"] == 6 and doc["variants"]["on"]["boots"] == 6
    assert doc["variants"]["off"]["overrides"] == ["sim.initcall_debug=false"]
    assert doc["bench"]["concurrent"] and len(doc["bench"]["starts"]) == 2
    assert json.loads((folder / "cost.json").read_text())["stages"] == doc["stages"]
    # Every boot is a run folder with its report; rig compare reads the sides as well.
    assert len(list(folder.glob("*/report.json"))) == 14  # 12 + one warm-up each
