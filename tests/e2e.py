"""Helpers for end-to-end runs against the simulated board (imported by tests)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.conftest import REPO


def make_config(
    tmp: Path,
    board: str = "fast.toml",
    drop_channels: tuple[str, ...] = (),
    analyzer: str = "sim",
    extra: str = "",
) -> Path:
    """A copy of config/rig.toml writing into `tmp`, with some analyzer channels unwired."""
    text = (REPO / "config" / "rig.toml").read_text()
    text = text.replace('results_dir = "../results"', f'results_dir = "{tmp / "results"}"')
    text = text.replace(
        'profile = "boards/ecovec-optimised.toml"',
        f'profile = "{REPO / "config" / "boards" / board}"',
    )
    text = text.replace("off_hold_s = 0.5", "off_hold_s = 0.1")
    text = text.replace('driver = "sim"          #', f'driver = "{analyzer}"  #')
    for name in drop_channels:
        text = re.sub(rf"^{name} = \"D\d\"\n", "", text, flags=re.M)
    path = tmp / "rig.toml"
    path.write_text(text + extra)
    return path


def truth_boot(folder: Path) -> dict[str, Any]:
    truth = json.loads((folder / "truth.json").read_text())
    assert len(truth["boots"]) == 1
    return truth["boots"][0]


def boundary_errors(report: dict[str, Any], boot: dict[str, Any]) -> list[dict[str, Any]]:
    """Each measured stage boundary against the simulator's truth."""
    true = {s["name"]: s for s in boot["stages"]}
    out = []
    for s in report["stages"]:
        for side in ("start", "end"):
            b = s[side]
            err = s[f"{side}_s"] - true[s["name"]][f"{side}_s"]
            out.append(
                {
                    "stage": s["name"],
                    "side": side,
                    "source": b["source"],
                    "error_s": err,
                    "uncertainty_s": b["uncertainty_s"],
                }
            )
    return out
