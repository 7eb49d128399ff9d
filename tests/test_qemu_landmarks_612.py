"""Landmarks on Linux 6.12 (issue 26 item 3), on console-only boots checked against QEMU's
trace: Debian 12's own arm64 6.12 kernel (config/qemu-arm64-stock-6.12.toml, no hooks:
the kernel raises nothing, U-Boot raises `bootm` without a tag) is `ok` with its
boundaries from the 6.12 calibration, U-Boot's inside its stated uncertainty; and our
hooked 6.12 kernel's console with its hooks taken out (the tags and the hooks' kernel
parameters overwritten: what the same kernel without the hooks prints) has every
landmark, U-Boot's, the root mount's and init's, inside its stated uncertainty against
the edges its hooks raised. `make test` builds the images first (make qemu-images) and
requires them, so a missing build fails there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.instruments.drivers import driver_specs, load_config
from rig.instruments.qemu.reference import reference_edges
from rig.measure.pipeline import analyze_folder
from tests.e2e import REPO
from tests.qemu_env import qemu_config, rig_run
from tests.require import require
from tests.test_real_hookless import assert_covers, stages, without_hooks

STOCK = "qemu-arm64-stock-6.12.toml"
HOOKED = "qemu-arm64-6.12.toml"
OWN = "linux-6.12-arm64"


def images_of(config: str, tmp: Path) -> Path:
    try:
        qemu = driver_specs(load_config(qemu_config(tmp, base=config))).qemu
        assert qemu is not None
        return qemu.image_dir()
    except ConfigError as e:
        require("qemu", f"QEMU images for config/{config} not built (make qemu-images): {e}")


def console_only(tmp: Path, config: str) -> Path:
    """config/CONFIG with its images, results in TMP and no capture (the trace is kept)."""
    cfg = qemu_config(tmp, images_of(config, tmp), base=config)
    text = cfg.read_text()
    # The analyzer's driver (its comment names "none"), not the power's.
    (old,) = [x for x in text.splitlines() if x.startswith('driver = "qemu"') and '"none"' in x]
    cfg.write_text(text.replace(old, 'driver = "none"'))
    return cfg


def own_calibration(report: dict) -> dict:
    info = report["analysis"]["landmarks"]
    assert (info["kernel_version"], info["kernel_arch"]) == ("6.12", "arm64")
    assert all(u["calibration"] == OWN and u["widened_s"] == 0.0 for u in info["used"])
    return {u["marker"]: u["landmark"] for u in info["used"]}


@pytest.fixture(scope="module")
def stock_images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return images_of(STOCK, tmp_path_factory.mktemp("probe"))


def test_the_stock_612_images_are_debians_hookless_kernel(stock_images: Path) -> None:
    manifest = json.loads((stock_images / "manifest.json").read_text())
    assert manifest["target"] == "qemu-arm64-stock-6.12"
    kernel = [k for k in manifest["packages"] if k.startswith("linux-image-6.12.")]
    assert kernel and kernel[0].endswith("+deb12-arm64:arm64"), manifest["packages"]
    config = (stock_images / "kernel.config").read_text()
    assert "CONFIG_GPIO_PL061=y" in config and "CONFIG_BOOTRIG_MARKERS" not in config


def test_console_only_stock_612_boot_is_ok_with_its_own_calibration(
    tmp_path: Path, stock_images: Path
) -> None:
    code, out = rig_run(console_only(tmp_path, STOCK))
    report, folder = out["report"], Path(out["folder"])
    assert code == 0 and report["outcome"] == "ok", report["analysis"]["notes"]
    assert report["capture"] is None
    log = (folder / "console.log").read_text(errors="replace")
    assert "Linux version 6.12." in log and "Debian" in log
    assert not any(f"bootrig: marker {m}" in log for m in ("bootm", "do_mount_root", "kernel_init"))
    truth = reference_edges(folder)
    assert set(truth) == {"bootm", "ui_ready"}  # the kernel raised nothing
    st = stages(report)
    assert own_calibration(report) == {"bootm": "uboot_starting_kernel", "kernel_init": "run_init"}
    # The landmark with a traced edge is inside its stated uncertainty.
    assert st["bootloader"]["end"]["source"] == "landmark"
    assert_covers(st["bootloader"], truth["bootm"])
    assert_covers(st["application"], truth["ui_ready"])
    assert st["rootfs_mount"]["end"]["landmark"] == "run_init"
    assert "no root mount (initramfs)" in st["rootfs_mount"]["note"]


def test_hooked_612_console_without_its_hooks_has_every_landmark_on_its_edge(
    tmp_path: Path,
) -> None:
    code, out = rig_run(console_only(tmp_path, HOOKED))
    folder = Path(out["folder"])
    assert code == 0 and out["report"]["outcome"] == "ok"
    assert "Linux version 6.12." in (folder / "console.log").read_text(errors="replace")
    boot = without_hooks(folder, tmp_path / "without-hooks")
    report = analyze_folder(boot, write=False).to_json()
    assert report["outcome"] == "ok", report["analysis"]["notes"]
    truth = reference_edges(boot)
    st = stages(report)
    ends = {"bootloader": "bootm", "kernel": "do_mount_root", "rootfs_mount": "kernel_init"}
    keys = {"bootm": "uboot_starting_kernel", "do_mount_root": "vfs_mounted_root"}
    keys["kernel_init"] = "run_init"
    assert own_calibration(report) == keys
    for stage, marker in ends.items():
        assert st[stage]["end"]["source"] == "landmark"
        assert_covers(st[stage], truth[marker])


def test_the_stock_612_config_differs_from_6_1s_only_in_its_kernel() -> None:
    a = (REPO / "config" / "qemu-arm64-stock.toml").read_text().split("[rig]", 1)[1]
    b = (REPO / "config" / STOCK).read_text().split("[rig]", 1)[1]
    diff = {x for x in b.splitlines() if x not in a.splitlines()}
    assert diff == {
        'variant = "stock-6.12"',
        'build_script = "../firmware-hooks/qemu-arm64/build-stock-6.12.sh"',
    }
