"""Recorded boots of the QEMU target's systemd variant (tests/data/real/systemd-*, see its
README): Debian's stock arm64 kernel and Debian's systemd as PID 1, whose
ui-ready.service raises the ui_ready GPIO and writes its tag. Without that tag on the
console, systemd's `Startup finished` stands in for ui_ready (landmark
`systemd_startup_finished`), and its stated uncertainty must cover QEMU's traced edge.
These boots are not among the landmark's calibration boots, so the check is independent.
Nothing here needs QEMU."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rig.analysis.landmark_calibration import CALIBRATION, load_calibration
from rig.analysis.landmarks import LANDMARKS
from rig.instruments.qemu.reference import reference_edges
from rig.measure.pipeline import analyze_folder
from tests.e2e import REPO
from tests.require import require
from tests.test_real_boots import DATA
from tests.test_real_hookless import edit_console

CONSOLE = sorted(DATA.glob("systemd-console-*"))
CAPTURE = sorted(DATA.glob("systemd-capture-*"))
KEY = "systemd_startup_finished"
TAG = b"bootrig: marker ui_ready"
CONFIG = "config/qemu-arm64-systemd.toml"
BUILD = REPO / "firmware-hooks" / "qemu-arm64" / "build-systemd.sh"


def stages(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in report["stages"]}


def without_tag(src: Path, dst: Path) -> Path:
    """The boot as if ui-ready printed no tag: the tag overwritten with as many filler
    bytes, every byte keeping its arrival time (the GPIO edge, if captured, stays)."""

    def edit(stream: bytes) -> bytes:
        assert stream.count(TAG) == 1
        return stream.replace(TAG, b"-" * len(TAG))

    return edit_console(src, dst, edit)


def test_the_recorded_boots_run_debians_systemd() -> None:
    assert len(CONSOLE) >= 2 and len(CAPTURE) >= 1
    for boot in [*CONSOLE, *CAPTURE]:
        run = json.loads((boot / "run.json").read_text())
        assert run["variant"] == "systemd" and run["config_file"] == Path(CONFIG).name
        log = (boot / "console.log").read_text(errors="replace")
        assert "Linux version 6.1.0-" in log and "Run /init as init process" in log
        assert "systemd[1]: systemd 252" in log and "running in system mode" in log
        assert "systemd[1]: Starting ui-ready.service" in log
        # The landmark: PID 1's line, after ui-ready's tag (its job is in the transaction).
        assert log.index("bootrig: marker ui_ready") < log.index("systemd[1]: Startup finished in")
        assert "bootrig: marker kernel_init" not in log
        # The stock kernel raises no line: QEMU traced only U-Boot's and ui-ready's.
        assert set(reference_edges(boot)) == {"bootm", "ui_ready"}


@pytest.mark.parametrize("boot", [*CONSOLE, *CAPTURE], ids=lambda p: p.name)
def test_with_its_tag_the_hook_ends_the_application(boot: Path) -> None:
    report = analyze_folder(boot, write=False).to_json()
    truth = reference_edges(boot)
    app = stages(report)["application"]
    assert report["outcome"] == "ok", report["analysis"]["notes"]
    assert "landmark" not in app["end"]
    if (boot / "capture.sr").is_file():
        assert app["end"]["source"] == "gpio"
        assert app["end_s"] == pytest.approx(truth["ui_ready"], abs=1.5e-6)
    else:
        assert app["end"]["source"] in ("printk", "host")
        assert abs(app["end_s"] - truth["ui_ready"]) <= app["end"]["uncertainty_s"]
    assert not any(KEY in n or "Startup finished" in n for n in report["analysis"]["notes"])


@pytest.mark.parametrize("boot", CONSOLE, ids=lambda p: p.name)
def test_without_its_tag_startup_finished_stands_in_and_covers_the_edge(
    boot: Path, tmp_path: Path
) -> None:
    # Not among the landmark's calibration boots: an independent check.
    assert boot.name not in json.loads(CALIBRATION.read_text())["boots"]
    copy = without_tag(boot, tmp_path / boot.name)
    report = analyze_folder(copy, write=False).to_json()
    truth = reference_edges(copy)
    app = stages(report)["application"]
    assert report["outcome"] == "ok", report["analysis"]["notes"]
    assert app["end"]["source"] == "landmark" and app["end"]["landmark"] == KEY
    assert app["note"] == "landmark"
    err = app["end_s"] - truth["ui_ready"]
    assert abs(err) <= app["end"]["uncertainty_s"], (err, app["end"])
    # The calibration's spread is in the stated uncertainty, not only the line's.
    assert app["end"]["uncertainty_s"] >= load_calibration().offsets[KEY].uncertainty_s
    # The note says what stood in, on what assumption, and where it was calibrated.
    note = next(n for n in report["analysis"]["notes"] if n.startswith("ui_ready:"))
    assert "systemd's `Startup finished` stands in" in note
    assert "only as good as that assumption" in note
    assert f"calibrated on qemu-arm64 ({CONFIG})" in note


@pytest.mark.parametrize("boot", CAPTURE, ids=lambda p: p.name)
def test_a_captured_boot_without_the_tag_still_takes_the_gpio(boot: Path, tmp_path: Path) -> None:
    copy = without_tag(boot, tmp_path / boot.name)
    report = analyze_folder(copy, write=False).to_json()
    app = stages(report)["application"]
    assert app["end"]["source"] == "gpio"
    assert app["end_s"] == pytest.approx(reference_edges(copy)["ui_ready"], abs=1.5e-6)


def test_the_landmark_is_calibrated_on_the_systemd_variant_alone() -> None:
    data = json.loads(CALIBRATION.read_text())
    entry = data["landmarks"][KEY]
    assert entry["marker"] == "ui_ready" and entry["clock"] == "printk"
    assert entry["target"]["name"] == f"qemu-arm64 ({CONFIG})"
    assert entry["target"]["init"].startswith("systemd 252")
    assert "--merge" in entry["command"] and entry["n"] >= 10
    # The stated uncertainty covers every calibration boot.
    for boot, off in entry["boots"].items():
        assert data["boots"][boot] == "results/systemd-calibration"
        assert abs(off - entry["offset_s"]) <= entry["uncertainty_s"], boot
    # The other landmarks keep the file's own (hooked) target and their boots.
    cal = load_calibration()
    assert cal.target_of(KEY) == entry["target"]["name"]
    for lm in LANDMARKS:
        if lm.key != KEY:
            assert "target" not in data["landmarks"][lm.key]
            assert cal.target_of(lm.key) == data["target"]["name"] == cal.target
            assert not set(data["landmarks"][lm.key]["boots"]) & set(entry["boots"])


def build_dir(hooks: Path) -> Path:
    r = subprocess.run(
        ["bash", str(hooks / "qemu-arm64" / BUILD.name), "--dir"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if r.returncode == 3:
        require("qemu", f"arm64 package lists unavailable: {r.stderr.strip()}")
    assert r.returncode in (0, 1), r.stderr
    path = Path(r.stdout.strip())
    assert path.parent.name == "qemu-arm64-systemd" and len(path.name) == 16
    return path


def test_the_build_is_cached_by_its_own_inputs(tmp_path: Path) -> None:
    hooks = tmp_path / "firmware-hooks"
    shutil.copytree(REPO / "firmware-hooks", hooks)
    first = build_dir(REPO / "firmware-hooks")
    assert build_dir(hooks) == first, "the hash must not depend on where the tree is"
    masked = hooks / "qemu-arm64" / "systemd" / "masked-units"
    masked.write_text(masked.read_text() + "systemd-sysctl.service\n")
    assert build_dir(hooks).name != first.name
