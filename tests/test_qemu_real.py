"""The real QEMU targets, end to end: Debian's U-Boot, the 6.1 and the 6.12 kernel with
our hooks on arm64 and the 6.1 kernel on armv7 (32-bit ARM: Debian's qemu_arm U-Boot,
the markers from its environment alone), the busybox root filesystem with ui-ready;
measured by `rig run`, `rig soak`
and checked against QEMU's own trace of the GPIO writes. `make test` builds the images
first (`make qemu-images`) and requires them (tests/require.py), so a missing build fails
there."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.instruments.drivers import driver_specs, load_config
from rig.instruments.qemu.reference import reference_edges
from tests.qemu_env import qemu_config, rig_run, rig_soak
from tests.require import require

MARKERS = ("bootm", "do_mount_root", "kernel_init", "ui_ready")
#: test id -> the kernel version and the config (under config/) of the hooked target
TARGETS = {
    "linux-6.1": ("6.1", "qemu-arm64.toml"),
    "linux-6.12": ("6.12", "qemu-arm64-6.12.toml"),
    "armv7-linux-6.1": ("6.1", "qemu-armv7.toml"),
}


@dataclass(frozen=True)
class Target:
    version: str
    config: str  # under config/
    images: Path

    def cfg(self, tmp: Path, extra: str = "") -> Path:
        return qemu_config(tmp, self.images, extra=extra, base=self.config)


def _target(name: str, tmp: Path) -> Target:
    version, config = TARGETS[name]
    try:
        qemu = driver_specs(load_config(qemu_config(tmp, base=config))).qemu
        assert qemu is not None
        return Target(version, config, qemu.image_dir())
    except ConfigError as e:
        require("qemu", f"QEMU images for config/{config} not built (make qemu-images): {e}")


@pytest.fixture(scope="module", params=sorted(TARGETS))
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Target:
    return _target(request.param, tmp_path_factory.mktemp("probe"))


def test_real_boot_is_measured_from_gpio(tmp_path: Path, target: Target) -> None:
    code, out = rig_run(target.cfg(tmp_path))
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
    # The console shows the real firmware: U-Boot's banner and the kernel's, of its version.
    log = (folder / "console.log").read_text(errors="replace")
    assert "U-Boot 2023.01" in log and f"Linux version {target.version}." in log
    assert "bootrig: marker do_mount_root" in log and "VFS: Mounted root" in log


def test_initcall_debug_boot_gives_the_initcall_table(tmp_path: Path, target: Target) -> None:
    cfg = target.cfg(tmp_path)
    text = cfg.read_text().replace('kernel_args = ""', 'kernel_args = "initcall_debug loglevel=8"')
    cfg.write_text(text)
    code, out = rig_run(cfg)
    report = out["report"]
    assert code == 0, report["outcome"]
    calls = report["initcalls"]
    assert len(calls) > 20
    log = (Path(out["folder"]) / "console.log").read_text(errors="replace")
    assert "initcall_debug" in log
    # Every initcall of this kernel's console is in the table, with the kernel's own
    # duration: the parser reads this version's lines (not only the device probes'
    # "probe of X returned 0 after N usecs", which 6.12 prints too).
    called = re.findall(r"^\[ *[\d.]+\] calling  (\w+)\+", log, re.M)
    kernel_us = dict(
        re.findall(r"^\[ *[\d.]+\] initcall (\w+)\+\S+ returned -?\d+ after (\d+) usecs", log, re.M)
    )
    assert [c["function"] for c in calls] == called
    assert all(c["returned"] for c in calls)
    assert {c["function"]: round(c["duration_s"] * 1e6) for c in calls} == {
        f: int(us) for f, us in kernel_us.items()
    }


def test_soak_on_the_real_target(tmp_path: Path) -> None:
    """On 6.1 only: soaking is the rig's, not the kernel's."""
    (tmp_path / "probe").mkdir()
    target = _target("linux-6.1", tmp_path / "probe")
    folders = rig_soak(target.cfg(tmp_path), 2, tmp_path / "results")
    assert len(folders) == 2
    for f in folders:
        assert json.loads((f / "report.json").read_text())["outcome"] == "ok"
