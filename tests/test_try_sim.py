"""`rig try` on the simulated board, through the CLI: without a source it boots once for
the advice; advice this target cannot apply is listed with the reason, and with nothing
left to try the command says so (exit 2), keeping the boot it took."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e import REPO, make_config


def test_without_a_source_it_boots_once_and_names_what_it_cannot_try(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    p = subprocess.run(
        [sys.executable, "-m", "rig", "try", "--config", str(cfg), "--json"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    assert p.returncode == 2, doc
    assert "nothing to try" in doc["error"] and "takes no kernel arguments" in doc["error"]
    (folder,) = (tmp_path / "results").glob("try-*")
    report = json.loads((folder / "source" / "report.json").read_text())
    assert report["outcome"] == "ok" and report["advisories"]
