"""The run and report model: real artifacts read and written back byte for byte, and
every mismatch named by its key."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from rig.artifacts import rundir
from rig.errors import ArtifactError
from rig.measure.pipeline import analyze_folder
from rig.model import Report, Run
from rig.model.clocks import ReadBound
from rig.model.codec import dump, load
from rig.model.sections import Phase, SystemdSection, UBootSection
from tests.sample_report import sample_report

REAL = Path(__file__).parent / "data" / "real"
FOLDERS = sorted(p.name for p in REAL.iterdir() if (p / "run.json").exists())


@pytest.mark.parametrize("name", FOLDERS)
def test_real_reports_round_trip(name: str, tmp_path: Path) -> None:
    folder = tmp_path / name
    shutil.copytree(REAL / name, folder)
    report = analyze_folder(folder, write=False)
    text = json.dumps(report.to_json(), indent=2)
    again = Report.from_json(json.loads(text))
    assert json.dumps(again.to_json(), indent=2) == text
    assert again == report


@pytest.mark.parametrize("name", FOLDERS)
def test_real_runs_round_trip(name: str) -> None:
    obj = json.loads((REAL / name / "run.json").read_text(encoding="utf-8"))
    run = Run.from_json(obj)
    back = run.to_json()
    if obj.get("capture", {}).get("raw_bits", 0) is None:
        obj["capture"].pop("raw_bits")  # null and absent mean one thing (one byte as is)
    assert back == obj
    assert run.power_on_ns == obj["power_on_ns"] and run.board == obj["board"]


def test_sections_are_typed(tmp_path: Path) -> None:
    """The console's sections and the clocks are read by attribute, not by key."""
    shutil.copytree(REAL / "systemd-capture-1", tmp_path / "b")
    report = Report.from_json(analyze_folder(tmp_path / "b", write=False).to_json())
    assert isinstance(report.systemd, SystemdSection) and report.systemd.startup is not None
    assert report.systemd.startup.parts == {"kernel": 3.506, "userspace": 5.867}
    assert isinstance(report.uboot, UBootSection) and report.uboot.banners[0].phase == "U-Boot"
    assert report.console is not None and report.console.pacing is not None
    assert report.clocks.host is not None and report.clocks.host.pacing == report.console.pacing
    assert report.phases and all(isinstance(p, Phase) for p in report.phases)


def test_unknown_keys_survive(tmp_path: Path) -> None:
    doc = sample_report(1, initcalls=2).to_json()
    doc["from_a_newer_rig"] = {"x": 1}
    doc["stages"][0]["new_stage_key"] = 3
    back = Report.from_json(doc).to_json()
    assert back["from_a_newer_rig"] == {"x": 1} and back["stages"][0]["new_stage_key"] == 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema": "bootrig.report/9"}, "key 'schema': expected 'bootrig.report/1'"),
        ({"outcome": "fine"}, "key 'outcome'"),
        ({"stages": [{"name": "x", "duration_s": "1"}]}, "key 'stages[0].duration_s'"),
        ({"stages": [{"duration_s": 1.0}]}, "missing key 'stages[0].name'"),
        ({"power_to_ui_s": True}, "key 'power_to_ui_s': expected a number or null"),
        ({"initcalls": [{"name": "f", "return": "x"}]}, "key 'initcalls[0].return'"),
        ({"kernel": {"version": 6}}, "key 'kernel.version': expected a string or null"),
        ({"phases": [{"stage": "kernel"}]}, "missing key 'phases[0].kind'"),
        ({"clocks": {"printk": {"model": None}}}, "key 'clocks.printk.model'"),
    ],
)
def test_bad_reports_name_the_key(change: dict, message: str, tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    rundir.write_json(path, {**sample_report(2, initcalls=1).to_json(), **change})
    with pytest.raises(ArtifactError, match=rf"{tmp_path}.*report.json: .*{_re(message)}"):
        rundir.read_report(path)


def test_bad_run_names_the_key() -> None:
    with pytest.raises(
        ArtifactError, match=r"key 'capture.samplerate_hz': expected an integer >= 1"
    ):
        Run.from_json(
            {"schema": "bootrig.run/1", "run_id": "r", "board": "b", "power_on_ns": 1,
             "started_utc": None, "capture": {"samplerate_hz": 0}}
        )  # fmt: skip


def _re(text: str) -> str:
    import re

    return re.escape(text)


def test_phase_offsets_stay_out_of_the_json() -> None:
    # The analysis keeps a phase's evidence bytes on the phase; report.json never has them,
    # and an `offsets` key someone wrote is the phase's own detail, not read back as them.
    phase = Phase("kernel", "unit", "x", 1, 2, 0.5, 0.1, 0.2, "measured", "host", 1e-3, {}, (3, 9))
    obj = dump(phase)
    assert "offsets" not in obj
    again = load(Phase, {**obj, "offsets": [3, 9]})
    assert again.offsets is None and again.detail == {"offsets": [3, 9]}
    assert again == dataclasses.replace(phase, detail={"offsets": [3, 9]})


def test_read_bound_late_lines_by_index_stay_out_of_the_json() -> None:
    bound = ReadBound(1e-3, True, [4], 0.02, {4: 0.02})
    obj = dump(bound)
    assert obj == {"bound_s": 1e-3, "measured": True, "late_lines": [4], "late_max_s": 0.02}
    again = load(ReadBound, obj)
    assert again.lines == {} and again == bound
    assert ReadBound(1e-3, True, [], 0.0).lines is not again.lines  # a dict each
