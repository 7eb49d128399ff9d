"""Artifacts that contradict themselves give `invalid_artifacts` with the reason, never a
silent `ok`: a measured boot of the simulated board (capture with the UART tap) and a
recorded real one (U-Boot + Linux under QEMU), each tampered with one way."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from rig.measure.pipeline import analyze_folder
from tests.e2e import make_config

REAL = Path(__file__).parent / "data" / "real"
INVALID = "invalid_artifacts"


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("run")
    p = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(make_config(tmp)), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return Path(json.loads(p.stdout)["folder"])


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for name in ("run.json", "console.jsonl", "capture.sr"):
        if (src / name).exists():
            shutil.copy(src / name, dst / name)
    return dst


def _console(folder: Path, change: Callable[[list[dict]], None]) -> None:
    path = folder / "console.jsonl"
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    change(recs)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))


def _samplerate(folder: Path, rate: str) -> None:
    """Rewrite the capture's metadata only: the samples stay as they were taken."""
    src = folder / "capture.sr"
    tmp = folder / "capture.tmp"
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zo:
        for item in zi.infolist():
            data = zi.read(item.filename)
            if item.filename == "metadata":
                text = data.decode().splitlines()
                data = "\n".join(
                    f"samplerate={rate}" if x.startswith("samplerate=") else x for x in text
                ).encode()
            zo.writestr(item, data)
    tmp.replace(src)


def test_the_untouched_run_is_ok(sim_run: Path, tmp_path: Path) -> None:
    report = analyze_folder(_copy(sim_run, tmp_path / "a"), write=False).to_json()
    assert (report["outcome"], report["analysis"]["invalid"]) == ("ok", [])


def test_console_times_going_back(sim_run: Path, tmp_path: Path) -> None:
    folder = _copy(sim_run, tmp_path / "a")

    def swap(recs: list[dict]) -> None:
        recs[10]["t_ns"], recs[11]["t_ns"] = recs[11]["t_ns"], recs[10]["t_ns"]

    _console(folder, swap)
    report = analyze_folder(folder, write=False).to_json()
    assert report["outcome"] == INVALID
    assert report["analysis"]["invalid"][0].startswith("console.jsonl record 12: t_ns goes back")


def test_console_before_power_on(tmp_path: Path) -> None:
    """A recorded real boot whose console times were shifted 2 s early: every tag would
    come before power-on, and the boot would last -1.x s."""
    folder = _copy(REAL / "console-1", tmp_path / "a")

    def early(recs: list[dict]) -> None:
        for r in recs:
            r["t_ns"] -= 2_000_000_000

    _console(folder, early)
    report = analyze_folder(folder, write=False).to_json()
    assert report["outcome"] == INVALID
    assert "before power-on (run.json power_on_ns)" in report["analysis"]["invalid"][0]


@pytest.mark.parametrize(
    ("rate", "why"),
    [
        ("500 kHz", "UART frame errors"),
        ("1.1 MHz", "UART frame errors"),
        ("2 MHz", "UART frame errors"),
    ],
)
def test_a_wrong_sample_rate_in_the_metadata(
    sim_run: Path, tmp_path: Path, rate: str, why: str
) -> None:
    folder = _copy(sim_run, tmp_path / "a")
    _samplerate(folder, rate)
    report = analyze_folder(folder, write=False).to_json()
    assert report["outcome"] == INVALID, report["analysis"]["invalid"]
    assert why in report["analysis"]["invalid"][0]
    assert "sample rate" in report["analysis"]["invalid"][0]


def test_a_tag_before_its_edge_on_a_capture_without_uart(tmp_path: Path) -> None:
    """A real QEMU capture (markers only, no UART tap) stated at half its rate: the
    hooks' edges land twice as late, after their own console tags."""
    folder = _copy(REAL / "capture-1", tmp_path / "a")
    _samplerate(folder, "500 kHz")
    report = analyze_folder(folder, write=False).to_json()
    assert report["outcome"] == INVALID
    assert any("before its edge on the capture" in x for x in report["analysis"]["invalid"])


def _run_json(folder: Path, change: Callable[[dict], None]) -> None:
    run = json.loads((folder / "run.json").read_text())
    change(run)
    (folder / "run.json").write_text(json.dumps(run))


def test_a_capture_that_run_json_records_but_is_gone(sim_run: Path, tmp_path: Path) -> None:
    folder = _copy(sim_run, tmp_path / "a")
    (folder / "capture.sr").unlink()
    report = analyze_folder(folder, write=False).to_json()
    assert report["outcome"] == INVALID
    assert "capture.sr is missing" in report["analysis"]["invalid"][0]
