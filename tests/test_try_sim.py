"""`rig try` on the simulated board, through the CLI: each knob tried gains its truth;
without a source it boots once for the advice, and with nothing it can try it says so
(exit 2), keeping the boot it took."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rig.model.knob import Knob
from simboard.knob_truth import knob_truth
from simboard.timeline import load
from tests.e2e import REPO, make_config


def test_without_a_source_it_boots_once_and_names_what_it_cannot_try(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    p = subprocess.run(
        [sys.executable, "-m", "rig", "try", "--config", str(cfg), "--json",
         "--advice", "kernel_decompress"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    assert p.returncode == 2, doc
    # kernel_decompress has no knob: an uncompressed image is a build change
    assert "nothing to try (kernel_decompress: " in doc["error"], doc
    (folder,) = (tmp_path / "results").glob("try-*")
    report = json.loads((folder / "source" / "report.json").read_text())
    assert report["outcome"] == "ok" and report["advisories"]


BOARD = REPO / "tests" / "data" / "boards" / "knobs.toml"


def test_each_knob_tried_gains_its_truth(tmp_path: Path) -> None:
    """The knobs board (every knob's step in it, no jitter): a U-Boot variable and a
    kernel argument, tried from a boot's advice, each gain their truth
    (simboard.knob_truth) within a few microseconds, recorded beside the estimate."""
    cfg = make_config(tmp_path, board=str(BOARD))
    run = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--json"],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    folder = json.loads(run.stdout)["folder"]
    p = subprocess.run(
        [sys.executable, "-m", "rig", "try", folder, "--config", str(cfg), "--json",
         "--advice", "image_verify", "--advice", "calibrate_delay", "--pairs", "5",
         "--warmup", "0"],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )  # fmt: skip
    doc = json.loads(p.stdout)
    assert p.returncode == 0, doc
    trials = {t["rule"]: t for t in doc["trials"]}
    assert trials["image_verify"]["sets"] == ['sim.uboot_env.verify="no"']
    assert trials["calibrate_delay"]["sets"] == ['sim.kernel_args="lpj=1495040"']
    profile = load(BOARD)
    for trial in trials.values():
        truth = knob_truth(profile, Knob(**trial["knob"]))
        m = trial["measured"]
        assert m["verdict"] == "gained" and m["outcome_kept"], m
        assert m["gain_s"] == pytest.approx(truth, abs=5e-6), (trial["rule"], m, truth)
    report = json.loads((Path(folder) / "report.json").read_text())
    verified = {a["rule"] for a in report["advisories"] if "verified" in a}
    assert verified == {"image_verify", "calibrate_delay"}
