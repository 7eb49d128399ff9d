"""What `rig try` measured stays with the advice: `verified` on the source report's
advisory survives a re-analysis (save_report carries it to the advisory with the same
rule and knob), and goes to InfluxDB as fields of the advisory point."""

from __future__ import annotations

import json
from pathlib import Path

from rig import names
from rig.artifacts.rundir import read_report
from rig.measure.pipeline import analyze_folder
from rig.model.knob import Knob, Verified
from rig.sinks.files import save_report
from rig.sinks.influx.points import advisory_point
from tests.e2e import make_config, rig_run_json

VERIFIED = Verified(0.0123, 0.01, 0.015, "gained", "within", True, 6, "results/try-x")


def run_sim_boot(tmp: Path) -> Path:
    """One boot of the simulated board (its report has advisories)."""
    return Path(rig_run_json(make_config(tmp))["folder"])


def test_a_verified_gain_survives_a_reanalysis_on_its_advisory(tmp_path: Path) -> None:
    folder = run_sim_boot(tmp_path)
    report = read_report(folder / "report.json")
    assert report.advisories
    target = report.advisories[0]
    target.verified = VERIFIED
    save_report(folder, report, html=False)
    again = analyze_folder(folder)  # a fresh analysis knows nothing of rig try
    assert all(a.verified is None for a in again.advisories)
    save_report(folder, again, html=False)
    doc = json.loads((folder / "report.json").read_text())
    kept = [a for a in doc["advisories"] if "verified" in a]
    assert [(a["rule"], a["verified"]["gain_s"]) for a in kept] == [(target.rule, 0.0123)]
    assert kept[0]["verified"]["folder"] == "results/try-x"


def test_the_advisory_point_carries_the_verified_gain_beside_the_estimate(tmp_path: Path) -> None:
    folder = run_sim_boot(tmp_path)
    a = read_report(folder / "report.json").advisories[0]
    _, plain = advisory_point(a)
    assert not any(k.startswith("verified_") for k in plain)
    a.knob = Knob(names.KNOB_KERNEL_ARG, "", names.KNOB_SET, "quiet")
    a.verified = VERIFIED
    _, f = advisory_point(a)
    assert f["verified_gain_s"] == 0.0123 and f["verified_verdict"] == "gained"
    assert (f["verified_ci_low_s"], f["verified_ci_high_s"]) == (0.01, 0.015)
    assert f["gain_s"] == plain["gain_s"]
