"""The QEMU target's stock variant (config/qemu-arm64-stock.toml): Debian's own arm64
kernel, no kernel hooks, a busybox initramfs running ui-ready. Its build is cached by a
hash of its inputs, apart from the hooked target's; a measured boot is `ok` with the
kernel's boundaries from landmarks, checked against QEMU's trace. `make test` builds the
images first and requires them (tests/require.py), so a missing build fails there."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.instruments.drivers import driver_specs, load_config
from rig.instruments.qemu.reference import reference_edges
from tests.e2e import REPO
from tests.require import require
from tests.test_hooks_qemu_build import out_dir

HOOKS = REPO / "firmware-hooks"
STOCK = Path("qemu-arm64") / "build-stock.sh"


def stock_dir(hooks: Path) -> Path:
    r = subprocess.run(
        ["bash", str(hooks / STOCK), "--dir"], capture_output=True, text=True, timeout=300
    )
    if r.returncode == 3:
        require("qemu", f"arm64 package lists unavailable: {r.stderr.strip()}")
    assert r.returncode in (0, 1), r.stderr
    path = Path(r.stdout.strip())
    assert path.parent.name == "qemu-arm64-stock" and len(path.name) == 16
    assert (r.returncode == 0) == (path / "manifest.json").is_file()
    return path


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    dest = tmp_path / "firmware-hooks"
    shutil.copytree(HOOKS, dest, ignore=shutil.ignore_patterns("ui-ready", "ui-ready-arm64"))
    return dest


def test_stock_dir_is_its_own_and_follows_its_inputs(copy: Path) -> None:
    first, hooked = stock_dir(HOOKS), out_dir(HOOKS)
    assert stock_dir(copy) == first, "the hash must not depend on where the tree is"
    init = copy / "qemu-arm64" / "stock" / "initramfs" / "init"
    init.write_text(init.read_text() + "\n")
    assert stock_dir(copy).name != first.name
    # The stock variant's inputs are not the hooked target's: its images stay cached.
    assert out_dir(copy) == hooked
    (copy / "qemu-arm64" / "stock" / "u-boot-env.txt").write_text("bootdelay=1\n")
    assert out_dir(copy) == hooked


def stock_config(tmp: Path, images: Path, extra: dict[str, str] | None = None) -> Path:
    text = (REPO / "config" / "qemu-arm64-stock.toml").read_text()
    text = text.replace('results_dir = "../results"', f'results_dir = "{tmp / "results"}"')
    text = text.replace('images = "auto"', f'images = "{images}"')
    for old, new in (extra or {}).items():
        assert old in text
        text = text.replace(old, new)
    path = tmp / "stock.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def images() -> Path:
    try:
        qemu = driver_specs(load_config(REPO / "config" / "qemu-arm64-stock.toml")).qemu
        assert qemu is not None
        return qemu.image_dir()
    except ConfigError as e:
        require("qemu", f"stock QEMU images not built (make qemu-images): {e}")


def rig_run(cfg: Path) -> tuple[int, dict]:
    p = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--json"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert p.stdout, p.stderr[-3000:]
    return p.returncode, json.loads(p.stdout)


def test_manifest_names_debians_kernel(images: Path) -> None:
    manifest = json.loads((images / "manifest.json").read_text())
    assert manifest["target"] == "qemu-arm64-stock"
    kernel = [k for k in manifest["packages"] if k.startswith("linux-image-6.1.")]
    assert kernel and kernel[0].endswith("-arm64:arm64"), manifest["packages"]
    config = (images / "kernel.config").read_text()
    assert "CONFIG_GPIO_PL061=y" in config and "CONFIG_BOOTRIG_MARKERS" not in config


def test_stock_boot_is_ok_with_landmarks_and_no_root_mount(tmp_path: Path, images: Path) -> None:
    code, out = rig_run(stock_config(tmp_path, images))
    report, folder = out["report"], Path(out["folder"])
    assert code == 0 and report["outcome"] == "ok", report["analysis"]["notes"]
    truth = reference_edges(folder)
    assert set(truth) == {"bootm", "ui_ready"}  # the kernel raised nothing
    st = {s["name"]: s for s in report["stages"]}
    assert st["bootloader"]["end_s"] == pytest.approx(truth["bootm"], abs=1.5e-6)
    assert st["application"]["end_s"] == pytest.approx(truth["ui_ready"], abs=1.5e-6)
    assert st["rootfs_mount"]["end"]["landmark"] == "run_init"
    assert st["rootfs_mount"]["duration_s"] == 0.0
    assert "no root mount (initramfs)" in st["rootfs_mount"]["note"]


def test_quiet_console_only_stock_boot_ends_on_its_stand_in(tmp_path: Path, images: Path) -> None:
    cfg = stock_config(
        tmp_path,
        images,
        {
            'kernel_args = ""': 'kernel_args = "quiet"',
            'driver = "qemu"          # "none"': 'driver = "none"          # "none"',
        },
    )
    code, out = rig_run(cfg)
    report, folder = out["report"], Path(out["folder"])
    assert code == 0 and report["outcome"] == "ok", report["analysis"]["notes"]
    run = json.loads((folder / "run.json").read_text())
    # The tag never reached the console: the init script's line ended the wait.
    assert run["timing"]["boot_s"] < 15 and run["timing"]["ui_ready_seen_ns"]
    truth = reference_edges(folder)
    st = {s["name"]: s for s in report["stages"]}
    bootm = st["bootloader"]
    assert bootm["end"]["source"] == "landmark"
    assert abs(bootm["end_s"] - truth["bootm"]) <= bootm["end"]["uncertainty_s"]
    assert st["rootfs_mount"]["note"] == "hidden by quiet"
    assert any("not seen" in n and "quiet" in n for n in report["analysis"]["notes"])
