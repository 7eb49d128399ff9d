"""Each advisory's knob on the real rig path (groundwork for `rig try`, issue 25): the
rig's cycle boots the simulator process as `[sim]` configures it, once as written and
once per knob the first boot's advice names; the measured stages move by the knob's
truth (simboard.knob_truth) and the advice of the knob-on boot no longer gives it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.measure.cycle import run_cycle
from rig.measure.pipeline import analyze_folder
from rig.model.knob import Knob
from simboard.knob_truth import POWER_TO_UI, knob_gains, with_knob
from simboard.timeline import load
from tests.e2e import REPO, make_config

BOARD = REPO / "tests" / "data" / "boards" / "knobs.toml"
#: knob name -> the advisory rule that names it
RULES = {
    "bootdelay": "uboot_bootdelay",
    "verify": "image_verify",
    "silent": "uboot_console",
    "quiet": "console_output",
    "lpj": "calibrate_delay",
    "initcall_blacklist": "slow_initcall",
    "rootdelay": "root_wait",
}
#: Four boundaries (two boots) on a 1 MHz capture: within a few samples (0.9 us seen).
TOLERANCE_S = 5e-6


def _toml_table(env: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items()) + "}"


def _boot(tmp: Path, overrides: list[str]) -> dict[str, Any]:
    cfg = load_config(make_config(tmp, board=str(BOARD)), overrides=overrides)
    with Instruments(cfg) as bench:
        result = run_cycle(cfg, bench)
    truth = json.loads((result.folder / "truth.json").read_text())
    return {**analyze_folder(result.folder, write=False).to_json(), "truth": truth}


def _stages(report: dict[str, Any]) -> dict[str, float]:
    out = {s["name"]: s["duration_s"] for s in report["stages"]}
    out[POWER_TO_UI] = report["power_to_ui_s"]
    return out


def _advice(report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [
        a
        for a in report["advisories"]
        if a["rule"] == RULES[name] and (a.get("knob") or {}).get("name") == name
    ]


@pytest.fixture(scope="module")
def as_written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _boot(tmp_path_factory.mktemp("off"), [])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RULES))
def test_each_knob_moves_the_boot_by_its_truth(
    as_written: dict[str, Any], name: str, tmp_path: Path
) -> None:
    (advice,) = _advice(as_written, name)
    knob = Knob(**advice["knob"])
    on = with_knob(load(BOARD), knob)
    overrides = [f"sim.kernel_args={json.dumps(on.settings.kernel_args)}"]
    overrides.append(f"sim.uboot_env={_toml_table(dict(on.settings.uboot_env))}")
    report = _boot(tmp_path, overrides)
    truth = knob_gains(load(BOARD), knob)
    before, after = _stages(as_written), _stages(report)
    measured = {k: before[k] - after[k] for k in truth}
    for stage, gain in truth.items():
        assert measured[stage] == pytest.approx(gain, abs=TOLERANCE_S), (stage, measured, truth)
    assert truth[POWER_TO_UI] > 0.001
    # The knob-on boot's advice no longer proposes it, or proposes much less.
    left = _advice(report, name)
    assert not left or max(a["gain_s"] for a in left) < advice["gain_s"] / 2, left
    knobs = report["truth"]["knobs"]  # what the simulator booted with
    assert knobs["kernel_args"] == on.settings.kernel_args
    assert knobs["uboot_env"] == dict(on.settings.uboot_env)
