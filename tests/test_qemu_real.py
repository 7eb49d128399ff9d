"""The real QEMU target, end to end: Debian's U-Boot, the 6.1 kernel with our hooks, the
busybox root filesystem with ui-ready; measured by `rig run`, `rig soak` and checked
against QEMU's own trace of the GPIO writes. `make test` builds the images first
(`make qemu-images`) and requires them (tests/require.py), so a missing build fails there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.instruments.drivers import driver_specs, load_config
from rig.instruments.qemu.reference import reference_edges
from tests.qemu_env import qemu_config, rig_run, rig_soak
from tests.require import require

MARKERS = ("bootm", "do_mount_root", "kernel_init", "ui_ready")


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cfg = qemu_config(tmp_path_factory.mktemp("probe"))
    try:
        qemu = driver_specs(load_config(cfg)).qemu
        assert qemu is not None
        return qemu.image_dir()
    except ConfigError as e:
        require("qemu", f"QEMU images not built (make qemu-images): {e}")


def test_real_boot_is_measured_from_gpio(tmp_path: Path, images: Path) -> None:
    code, out = rig_run(qemu_config(tmp_path, images))
    report, folder = out["report"], Path(out["folder"])
    assert code == 0 and report["outcome"] == "ok", report.get("analysis", {}).get("notes")
    truth = reference_edges(folder)
    assert set(truth) == set(MARKERS)
    assert truth["bootm"] < truth["do_mount_root"] < truth["kernel_init"] < truth["ui_ready"]
    stages = {s["name"]: s for s in report["stages"]}
    ends = {"bootloader": "bootm", "kernel": "do_mount_root", "rootfs_mount": "kernel_init"}
    for stage, marker in ends.items():
        assert stages[stage]["end"]["source"] == "gpio"
        assert stages[stage]["end_s"] == pytest.approx(truth[marker], abs=1.5e-6), stage
    assert stages["application"]["end_s"] == pytest.approx(truth["ui_ready"], abs=1.5e-6)
    # The kernel's tags carry printk stamps: the printk clock is fitted on the GPIO edges
    # of the kernel's hooks; ui-ready's tag is stamped after its edge by its syscalls
    # (about 2 ms under TCG): set apart, so it claims no false drift (it once gave 6500
    # ppm). QEMU's guest clock is the host's: the drift is ~0, within what is stated.
    fit = report["clocks"]["printk"]
    assert [a["name"] for a in fit["anchors"]] == ["do_mount_root", "kernel_init"]
    assert [a["name"] for a in fit["late_anchors"]] == ["ui_ready"]
    assert abs(fit["drift_ppm"]) <= fit["drift_uncertainty_ppm"] <= 100.0
    assert fit["rms_residual_s"] < 0.005
    # The console shows the real firmware: U-Boot's banner and the 6.1 kernel's.
    log = (folder / "console.log").read_text(errors="replace")
    assert "U-Boot 2023.01" in log and "Linux version 6.1" in log
    assert "bootrig: marker do_mount_root" in log and "VFS: Mounted root" in log


def test_initcall_debug_boot_gives_the_initcall_table(tmp_path: Path, images: Path) -> None:
    extra = ""
    cfg = qemu_config(tmp_path, images, extra=extra)
    text = cfg.read_text().replace('kernel_args = ""', 'kernel_args = "initcall_debug loglevel=8"')
    cfg.write_text(text)
    code, out = rig_run(cfg)
    report = out["report"]
    assert code == 0, report["outcome"]
    calls = report["initcalls"]
    assert len(calls) > 20
    log = (Path(out["folder"]) / "console.log").read_text(errors="replace")
    assert "initcall_debug" in log


def test_soak_on_the_real_target(tmp_path: Path, images: Path) -> None:
    folders = rig_soak(qemu_config(tmp_path, images), 2, tmp_path / "results")
    assert len(folders) == 2
    for f in folders:
        assert json.loads((f / "report.json").read_text())["outcome"] == "ok"
