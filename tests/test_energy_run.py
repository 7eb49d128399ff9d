"""`rig run --config config/examples/sim-psu.toml`: the simulated board switched and read
through its SCPI supply by the real PyVISA + pyvisa-py, each stage's energy against the
simulator's truth."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rig.model import Report
from rig.sinks.html.console import console_lines
from rig.sinks.html.timeline import CURRENT, boot_figure
from tests.e2e import REPO, truth_boot


def test_energy_per_stage_from_a_measured_boot(tmp_path: Path) -> None:
    text = (REPO / "config" / "examples" / "sim-psu.toml").read_text()
    text = text.replace('results_dir = "../../results"', f'results_dir = "{tmp_path / "results"}"')
    text = text.replace('profile = "../boards/', f'profile = "{REPO / "config" / "boards"}/')
    cfg = tmp_path / "psu.toml"
    cfg.write_text(text)
    p = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--json"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    out = json.loads(p.stdout)
    report, folder = out["report"], Path(out["folder"])
    assert report["outcome"] == "ok", p.stderr[-2000:]
    assert report["artifacts"]["power"] == "power.jsonl"
    run = json.loads((folder / "run.json").read_text())
    assert run["instruments"]["power_device"]  # *IDN? of the supply
    truth = {s["name"]: s["energy_j"] for s in truth_boot(folder)["stages"]}
    for st in report["stages"]:
        err = abs(st["energy_j"] - truth[st["name"]])
        assert err <= 0.02 * truth[st["name"]] + st["energy_uncertainty_j"], st["name"]
        assert st["peak_current_a"] >= st["mean_current_a"] > 0
    # report.html draws the supply's current on the boot's time axis, every stage's
    # joules over its span.
    model = Report.from_json(report)
    fig = boot_figure(model, console_lines(model, folder))
    (current,) = [t for t in fig.data if t.name == "supply current"]
    readings = (folder / "power.jsonl").read_text().count("\n")
    assert 0 < len(current.x) <= readings and current.yaxis == f"y{CURRENT}"
    assert max(current.y) == max(report["power"]["trace"]["a"])
    labels = {a.text for a in fig.layout.annotations}
    for st in report["stages"]:
        assert f"{st['name']}<br>{st['energy_j']:.3f} J" in labels
