"""What `rig analyze` prints: every time in its tables is on the report's t = 0 or says
its clock, and what the analysis noted reaches the terminal (issue 22 items 4 and 9)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from rig.artifacts.srzip import write_sr
from rig.measure.pipeline import analyze_folder
from rig.sinks.terminal import print_report
from tests.captures import read_sr
from tests.e2e import make_config

REAL = Path(__file__).resolve().parent / "data" / "real"


def rig_analyze_text(folder: Path) -> tuple[int, str]:
    """`rig analyze FOLDER --no-write` as a person sees it, on a terminal wide enough
    that no table row wraps."""
    p = subprocess.run(
        [sys.executable, "-m", "rig", "analyze", str(folder), "--no-write"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, p.stdout


def tables(text: str) -> dict[str, list[dict[str, str]]]:
    """The rich tables in `text`, by their first column's header: rows as {header: cell}."""
    out: dict[str, list[dict[str, str]]] = {}
    header: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("┃"):
            header = [c.strip() for c in line.strip("┃").split("┃")]
            out[header[0]] = []
        elif line.startswith("│") and header is not None:
            cells = [c.strip() for c in line.strip("│").split("│")]
            out[header[0]].append(dict(zip(header, cells, strict=True)))
        elif line.startswith("└"):
            header = None
    return out


def no_power_edge_folder(tmp: Path) -> Path:
    """A recorded boot (U-Boot, Linux with initcall_debug, the analyzer on every hook)
    whose rail probe came off: the capture shows the markers but no power-up."""
    src = REAL / "initcall-debug-1"
    folder = tmp / "no-edge"
    folder.mkdir()
    for name in ("run.json", "console.jsonl"):
        shutil.copyfile(src / name, folder / name)
    cap = read_sr(src / "capture.sr")
    bit = cap.channels.index("power")
    assert bit is not None
    data = cap.data & np.uint8(0xFF ^ (1 << bit))
    write_sr(folder / "capture.sr", cap.channels, cap.samplerate, [data])
    return folder


def test_a_boot_without_t0_shows_no_time_on_a_clock_it_does_not_name(tmp_path: Path) -> None:
    code, text = rig_analyze_text(no_power_edge_folder(tmp_path))
    assert code == 1 and "outcome no_power_edge" in " ".join(text.split()), text
    assert "no power-up edge" in text
    got = tables(text)
    stages, top = got["stage"], got["#"]
    assert [s["stage"] for s in stages][:2] == ["bootloader", "kernel"]
    for row in stages:  # no t = 0: a stage's start is no time
        assert row["start (s)"] == "—", row
    assert any(row["duration (s)"] != "—" for row in stages)  # durations are measured
    shown = [row for row in top if row["start (s)"] != "—"]
    for row in shown:  # each one on the kernel's own clock, and saying so
        assert row["clock"] == "kernel" and row["source"] == "printk_relative", row
    assert shown, "the initcalls keep their kernel-clock starts"
    assert "kernel: seconds since the kernel's clock started" in text


def test_a_boot_with_t0_prints_its_times_as_before(tmp_path: Path) -> None:
    code, text = rig_analyze_text(REAL / "initcall-debug-1")
    assert code == 0, text
    got = tables(text)
    assert all(row["start (s)"] != "—" for row in got["stage"])
    assert "clock" not in got["#"][0]  # every row on t = 0: no column for it
    assert all(row["start (s)"] != "—" for row in got["#"])


def test_without_a_printk_fit_a_silence_is_placed_on_t0_not_on_the_kernel_clock(
    tmp_path: Path,
) -> None:
    """A capture with only the power and U-Boot's lines wired: t = 0 is the power edge,
    but no kernel hook anchors the printk clock. A silence between two stamped lines
    lasts what their stamps say and is placed where its line arrived (as a phase is),
    not at a bare printk time that reads as seconds from power (0.011 s, before U-Boot
    had even started the kernel at 0.31 s); the initcalls keep their kernel-clock
    starts, and the terminal names that clock."""
    src = REAL / "initcall-debug-1"
    folder = tmp_path / "no-fit"
    folder.mkdir()
    for name in ("run.json", "console.jsonl"):
        shutil.copyfile(src / name, folder / name)
    cap = read_sr(src / "capture.sr")
    keep = sum(1 << i for i, c in enumerate(cap.channels) if c in ("power", "bootm"))
    write_sr(folder / "capture.sr", cap.channels, cap.samplerate, [cap.data & np.uint8(keep)])
    report = analyze_folder(folder, write=False)
    assert report.outcome == "ok" and report.clocks.printk is None
    bootm = next(e for e in report.events if e.name == "bootm" and e.source == "gpio")
    assert report.unattributed is not None
    kernel = [s for s in report.unattributed.silences if s.stage == "kernel"]
    assert kernel and {s.source for s in kernel} >= {"printk"}
    for s in kernel:
        assert s.start_s is not None and s.start_s >= bootm.t_s, s
    term = Console(file=io.StringIO(), width=400)
    print_report(report, term)
    text = term.file.getvalue()  # type: ignore[attr-defined]
    top = tables(text)["#"]
    for row in top:
        clock = "kernel" if row["source"] == "printk_relative" else "t = 0"
        assert row["clock"] == clock and row["start (s)"] != "—", row


@pytest.mark.slow
def test_the_analysis_notes_reach_the_terminal(tmp_path: Path) -> None:
    """A console configured at 9600 baud on a board that sends at 115200 (the
    simulated board paces its bytes at its own rate): report.json notes that the bytes
    came sooner than 9600 baud allows, and `rig run` and `rig analyze` both say so."""
    cfg = make_config(tmp_path, analyzer="none", set_keys={"baud": 9600})
    p = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(cfg)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert "Traceback" not in p.stderr, p.stderr
    (folder,) = (p.parent for p in (tmp_path / "results").glob("*/run.json"))
    notes = json.loads((folder / "report.json").read_text())["analysis"]["notes"]
    paced = [n for n in notes if n.startswith("console not paced at 9600 baud")]
    assert paced and "sooner than the baud rate allows" in paced[0], notes
    _, analyzed = rig_analyze_text(folder)
    for text in (p.stdout, analyzed):
        assert f"note: {paced[0]}" in " ".join(text.split()), text
