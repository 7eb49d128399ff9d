"""The contract (docs/contract.md) is enough: a folder written to exactly the documented
minimum, by a recorder that is not the rig, is analysed as the rig's own folder is.

The minimum folders are cut from real boots (tests/data/real/: Debian's U-Boot and the
hooked Linux 6.1 under QEMU): the console-only one keeps the recorded console.jsonl and
only the five required run.json keys, the capture-only one the recorded capture.sr
alone. `rig analyze` runs as the real command. Their boundaries must be the ones the
full recorded folder gives, within the stated uncertainty, and on QEMU's traced edges.

The page itself is checked against the code, so it cannot drift silently: every
outcome, channel name, exit code and required run.json key the code has is on it."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from rig import errors, names
from rig.artifacts import rundir
from rig.artifacts.srzip import read_info
from rig.instruments.qemu.reference import reference_edges
from rig.model import Run
from rig.outcomes import HANG_PREFIX, Outcome
from tests.e2e import rig_analyze_json

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "real"
DOC = REPO / "docs" / "contract.md"
#: run.json's required keys, as docs/contract.md states them (checked below).
MINIMUM_KEYS = ("schema", "run_id", "board", "power_on_ns", "started_utc")
#: Hooked kernel, tags on the console (tests/data/real/README.md).
CONSOLE_ONLY = ("console-1",)
CAPTURED = ("capture-1",)


def analyze(folder: Path) -> tuple[int, dict[str, Any]]:
    """`rig analyze FOLDER --json`, the real command: its exit code and report."""
    return rig_analyze_json(folder)


def full_report(boot: Path, tmp: Path) -> dict[str, Any]:
    folder = tmp / "full"
    shutil.copytree(boot, folder)
    code, report = analyze(folder)
    assert (code, report["outcome"]) == (0, "ok"), report.get("analysis")
    return report


def same_boundaries(minimum: dict[str, Any], full: dict[str, Any], only: set[str]) -> int:
    """Each boundary of `minimum` whose event is in `only` lies within its stated
    uncertainty of the full folder's; returns how many were compared."""
    full_stages = {s["name"]: s for s in full["stages"]}
    compared = 0
    for stage in minimum["stages"]:
        ref = full_stages[stage["name"]]
        for side in ("start", "end"):
            b = stage[side]
            if b is None or b["event"] not in only:
                continue
            assert ref[side] is not None and ref[side]["event"] == b["event"], (stage, side)
            err = stage[f"{side}_s"] - ref[f"{side}_s"]
            assert b["uncertainty_s"] is not None, (stage, side)
            assert abs(err) <= b["uncertainty_s"], (stage["name"], side, err, b)
            compared += 1
    return compared


@pytest.mark.parametrize("name", CONSOLE_ONLY)
def test_a_console_only_minimum_folder_is_a_boot(name: str, tmp_path: Path) -> None:
    """run.json with the five required keys and console.jsonl: no config, no state, no
    key only the rig writes. Complete, outcome ok, exit 0, t = 0 at the power-on
    command, and the boundaries of the full folder. (Before run.json `state` the rig
    took a run.json without completed_utc for a cycle the rig never finished, and filed
    this folder as rig_error, exit 3.)"""
    boot = DATA / name
    recorded = json.loads((boot / "run.json").read_text())
    folder = tmp_path / "minimum"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({k: recorded[k] for k in MINIMUM_KEYS}))
    shutil.copyfile(boot / "console.jsonl", folder / "console.jsonl")
    assert sorted(p.name for p in folder.iterdir()) == ["console.jsonl", "run.json"]

    code, report = analyze(folder)
    assert (code, report["outcome"]) == (0, "ok"), (code, report.get("analysis"))
    assert report["run_id"] == recorded["run_id"] and report["board"] == recorded["board"]
    assert report["time_base"]["reference"] == "host"
    assert report["time_base"]["power_on_ns"] == recorded["power_on_ns"]
    assert report["analysis"]["rig_error"] is None and report["analysis"]["invalid"] == []

    full = full_report(boot, tmp_path)
    assert [s["name"] for s in report["stages"]] == [s["name"] for s in full["stages"]]
    events = {e["name"] for e in report["events"]}
    assert same_boundaries(report, full, events) == 2 * len(full["stages"])
    assert report["power_to_ui_s"] == pytest.approx(
        full["power_to_ui_s"], abs=report["power_to_ui_uncertainty_s"]
    )
    # And right, not only the same: each marker boundary on QEMU's traced edge.
    truth = reference_edges(boot)
    for stage in report["stages"]:
        for side in ("start", "end"):
            if stage[side]["event"] in truth:
                err = stage[f"{side}_s"] - truth[stage[side]["event"]]
                assert abs(err) <= stage[side]["uncertainty_s"], (stage["name"], side, err)


@pytest.mark.parametrize("name", CAPTURED)
def test_a_capture_alone_is_a_boot(name: str, tmp_path: Path) -> None:
    """capture.sr alone, its channels named as the contract says: the run id is the
    folder's name, the board unknown, t = 0 at the debounced power edge, every marker
    on its traced edge to the sample, the marker boundaries those of the full folder."""
    boot = DATA / name
    channels = set(read_info(boot / "capture.sr").channels)
    assert {names.POWER, *names.MARKERS} <= channels
    folder = tmp_path / name
    folder.mkdir()
    shutil.copyfile(boot / "capture.sr", folder / "capture.sr")

    code, report = analyze(folder)
    assert (code, report["outcome"]) == (0, "ok"), (code, report.get("analysis"))
    assert (report["run_id"], report["board"]) == (name, "unknown")
    assert report["time_base"]["reference"] == "analyzer"
    sample = 1 / report["time_base"]["samplerate_hz"]
    truth = reference_edges(boot)
    gpio = {e["name"]: e["t_s"] for e in report["events"] if e["source"] == "gpio"}
    for marker in names.MARKERS:
        assert gpio[marker] == pytest.approx(truth[marker], abs=1.5 * sample), marker

    full = full_report(boot, tmp_path)
    assert same_boundaries(report, full, {names.POWER, *names.MARKERS}) >= len(names.MARKERS)
    assert report["power_to_ui_s"] == pytest.approx(full["power_to_ui_s"], abs=sample)


def test_every_minimum_key_is_needed(tmp_path: Path) -> None:
    """The five keys are the minimum: without any one of them run.json is refused,
    naming the key (bad input, exit 2), so the page does not promise less than the code
    needs."""
    run = json.loads((DATA / CONSOLE_ONLY[0] / "run.json").read_text())
    for key in MINIMUM_KEYS:
        folder = tmp_path / key
        folder.mkdir()
        (folder / "run.json").write_text(json.dumps({k: run[k] for k in MINIMUM_KEYS if k != key}))
        with pytest.raises(errors.ArtifactError, match=f"'{key}'") as e:
            rundir.read_run(folder)
        assert errors.exit_code(e.value) == errors.EXIT_INPUT


# The page against the code.


def section(title: str) -> str:
    """The text of docs/contract.md's `## title` section."""
    text = DOC.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"docs/contract.md has no section '## {title}'"
    return m.group(1)


def first_column(text: str) -> list[str]:
    """The first cell of each table row (header and rule left out)."""
    rows = [ln for ln in text.splitlines() if ln.startswith("|")]
    return [r.split("|")[1].strip() for r in rows[2:]]


def test_the_page_lists_every_outcome() -> None:
    listed = {c.strip("`") for c in first_column(section("Outcomes"))}
    code = {f"{HANG_PREFIX}<stage>" if k is Outcome.HANG_IN else k.value for k in Outcome}
    assert listed == code


def test_the_page_lists_every_channel_name_and_alias() -> None:
    text = section("Analyzer channel names")
    assert {c.strip("`") for c in first_column(text)} == set(names.CHANNELS)
    for alias, canonical in names.MARKER_ALIASES.items():
        assert f"`{alias}`" in text and f"`{canonical}`" in text, alias
    tag = section("The console tag")
    assert "bootrig: marker <name>" in tag
    assert all(f"`{m}`" in tag for m in names.MARKERS)
    assert names.TAG_RE.search(b"[    0.412345] bootrig: marker do_mount_root")


def test_the_page_lists_every_exit_code() -> None:
    code = {v for k, v in vars(errors).items() if k.startswith("EXIT_")}
    assert {int(c) for c in first_column(section("Exit codes"))} == code


def test_the_page_states_run_json_required_keys_as_the_model_has_them() -> None:
    text = section("run.json (`bootrig.run/1`)")
    listed = [c.strip("`") for c in first_column(text.split("###")[0])]
    required = [
        f.name
        for f in dataclasses.fields(Run)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    # `schema` has a default in the model but Run.from_json refuses any other value.
    assert sorted(listed) == sorted(MINIMUM_KEYS) == sorted(["schema", *required])
    assert f'`"{names.RUN_SCHEMA}"`' in text
    assert names.REPORT_SCHEMA in section("report.json (`bootrig.report/1`)")


def test_the_index_lists_every_page() -> None:
    index = (REPO / "docs" / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md") if p.name != "README.md")
    assert [p for p in pages if f"]({p})" not in index] == []
    assert index.index("(contract.md)") < min(
        index.index(f"({p})") for p in pages if p != "contract.md"
    )


def test_no_file_cites_a_design_file_outside_the_repository() -> None:
    """The contract lives in the repository: nothing points at the brief it began from."""
    word = "DES" + "IGN"  # spelled apart, so this file does not find itself
    roots = ["rig", "docs", "tests", "testsuites", "config", "firmware-hooks", "decoders", "bench"]
    files = [REPO / "README.md", REPO / "Makefile", REPO / "pyproject.toml"]
    for root in roots:
        files += [
            p
            for p in (REPO / root).rglob("*")
            if p.is_file() and not {"data", "__pycache__"} & set(p.parts)
        ]
    found = []
    for p in files:
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue  # not text (an image, a capture)
        found += [f"{p.relative_to(REPO)}:{n}" for n, ln in enumerate(text.splitlines(), 1)
                  if word in ln]  # fmt: skip
    assert found == []
