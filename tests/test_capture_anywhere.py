"""Captures from anywhere: real sigrok-dumps captures with their own channel names and no
power channel, a capture whose rail never rises; none of them may crash a sink."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rig.artifacts.srzip import write_sr
from rig.errors import ArtifactError
from rig.model import Report
from rig.sinks.influx.points import report_points

DUMPS = Path(__file__).resolve().parent / "data" / "sigrok-dumps" / "uart"
HELLO = DUMPS / "hello_world" / "8n1" / "hello_world_8n1_115200.sr"
RIG = [sys.executable, "-m", "rig"]


def _analyze(folder: Path, *args: str) -> tuple[int, dict, str]:
    p = subprocess.run(
        [*RIG, "analyze", str(folder), *args], capture_output=True, text=True, timeout=120
    )
    text = subprocess.run(
        [*RIG, "analyze", str(folder), "--no-write", *args[: -1 if "--json" in args else None]],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in p.stderr + text.stderr, p.stderr + text.stderr
    return p.returncode, json.loads(p.stdout), text.stdout


@pytest.mark.parametrize("engine", ["fast", "sigrok"])
def test_real_capture_with_its_own_channel_names(tmp_path: Path, engine: str) -> None:
    assert HELLO.exists(), "tests/data/sigrok-dumps holds the public sigrok-dumps captures"
    shutil.copy(HELLO, tmp_path / "capture.sr")
    _, report, text = _analyze(tmp_path, "--map", "TX=uart_tx", "--engine", engine, "--json")
    assert report["time_base"]["t0"] == "first sample of the capture (it has no power channel)"
    assert report["capture"]["channel_map"] == {"TX": "uart_tx"}
    # Three "Hello World!\r\n" at 115200 8N1: found, rate detected, no framing error.
    tap = report["console"]["uart_tap"]
    assert (tap["bytes"], tap["baud"], tap["frame_errors"], tap["lines_timed"]) == (
        42,
        115200,
        0,
        3,
    )
    assert "first sample of the capture" in text
    assert (tmp_path / "report.html").stat().st_size > 0
    with pytest.raises(ArtifactError, match="started_utc"):  # a bare capture has no boot time
        report_points(Report.from_json(report))


def test_markers_without_a_power_channel_count_from_the_first_sample(tmp_path: Path) -> None:
    data = np.zeros(20_000, dtype=np.uint8)
    data[3_000:] |= 1  # bootm on bit 0
    data[12_345:] |= 2  # ui_ready on bit 1
    write_sr(tmp_path / "capture.sr", ["B", "ui_ready"], 1_000_000, [data.tobytes()])
    _, report, _ = _analyze(tmp_path, "--map", "B=bootm", "--json")
    gpio = {e["name"]: e["t_s"] for e in report["events"] if e["source"] == "gpio"}
    assert gpio["bootm"] == pytest.approx(0.003) and gpio["ui_ready"] == pytest.approx(0.012345)


def test_a_rail_that_never_rises_crashes_no_sink(tmp_path: Path) -> None:
    data = np.zeros(10_000, dtype=np.uint8)
    data[5_000:] |= 2
    write_sr(tmp_path / "capture.sr", ["power", "bootm"], 1_000_000, [data.tobytes()])
    _, report, text = _analyze(tmp_path, "--json")
    assert report["outcome"] == "no_power_edge"
    assert report["time_base"]["t0"].startswith("none: the capture has no power-up edge")
    assert "no power-up edge" in text
    assert (tmp_path / "report.html").stat().st_size > 0


def test_bad_map_is_an_input_error(tmp_path: Path) -> None:
    shutil.copy(HELLO, tmp_path / "capture.sr")
    p = subprocess.run(
        [*RIG, "analyze", str(tmp_path), "--map", "TX=console", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "--map 'TX=console'" in json.loads(p.stdout)["error"]
