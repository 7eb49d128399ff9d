"""A channel toggling far faster than any boot signal (a floating probe, a clock on a
mis-mapped channel) is reported as such, not decoded, and costs no memory per edge."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from rig.artifacts.edges import scan_edges
from rig.artifacts.fastscan import scan_capture
from rig.artifacts.srzip import write_sr

RATE = 24_000_000
N = 3 * (1 << 20)


def _capture(path: Path, dense_bit: int) -> None:
    data = np.zeros(N, dtype=np.uint8)
    data[1000:] |= 1  # power
    data[2_000_000:] |= 2  # bootm
    data |= ((np.arange(N) >> 1) & 1).astype(np.uint8) << dense_bit  # toggles every 2 samples
    write_sr(path, ["power", "bootm", "ui_ready", "uart_tx"], RATE, [data.tobytes()])


def test_dense_channel_is_flagged_and_the_others_are_exact(tmp_path: Path) -> None:
    cap = tmp_path / "capture.sr"
    _capture(cap, dense_bit=2)  # ui_ready wired to a clock
    edges = scan_edges(cap, ["power", "bootm", "ui_ready"])
    assert set(edges.dense) == {"ui_ready"} and len(edges.at["ui_ready"]) == 0
    assert edges.at["power"].tolist() == [1000] and edges.at["bootm"].tolist() == [2_000_000]
    scan = scan_capture(cap, debounce_us=10).markers
    assert scan.power_up == (1000,) and scan.edges["bootm"] == (2_000_000,)
    assert "ui_ready" in scan.dense and any("toggles faster" in w for w in scan.warnings)


def test_dense_console_tap_is_an_error_not_a_decode(tmp_path: Path) -> None:
    cap = tmp_path / "capture.sr"
    _capture(cap, dense_bit=3)  # uart_tx floating
    p = subprocess.run(
        [sys.executable, "-m", "rig", "analyze", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(p.stdout)
    assert "uart_tx" in report["capture"]["dense_channels"]
    assert "toggles faster than any console" in report["console"]["uart_tap"]["error"]
    gpio = {e["name"]: e["t_s"] for e in report["events"] if e["source"] == "gpio"}
    assert abs(gpio["bootm"] - (2_000_000 - 1000) / RATE) < 1e-12
