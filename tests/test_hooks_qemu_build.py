"""firmware-hooks/qemu-arm64/build.sh, build-6.12.sh and qemu-armv7/build.sh --dir: the
output directory is named by a hash of every input of that build, the same on every call,
different as soon as one of its inputs changes, and not moved by the other builds' own
files."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.require import require

REPO = Path(__file__).resolve().parents[1]
HOOKS = REPO / "firmware-hooks"
BUILD = Path("qemu-arm64") / "build.sh"
BUILD_612 = Path("qemu-arm64") / "build-6.12.sh"
BUILD_ARMV7 = Path("qemu-armv7") / "build.sh"
OUT_FOLDER = {BUILD: "qemu-arm64", BUILD_612: "qemu-arm64-6.12", BUILD_ARMV7: "qemu-armv7"}


def out_dir(hooks: Path, script: Path = BUILD) -> Path:
    """Run SCRIPT --dir in a firmware-hooks tree; skip (or fail where the QEMU target is
    required) if the machine cannot."""
    r = subprocess.run(
        ["bash", str(hooks / script), "--dir"],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )
    if r.returncode == 3:
        require("qemu", f"package lists unavailable: {r.stderr.strip()}")
    if r.returncode == 2 and "missing Debian packages" in r.stderr:
        require("qemu", r.stderr.strip())
    assert r.returncode in (0, 1), f"{script} --dir failed ({r.returncode}):\n{r.stderr}"
    lines = r.stdout.splitlines()
    assert len(lines) == 1, r.stdout
    path = Path(lines[0])
    assert path.parent.name == OUT_FOLDER[script]
    assert len(path.name) == 16 and int(path.name, 16) >= 0, path.name
    # exit 0 exactly when the build is complete
    assert (r.returncode == 0) == (path / "manifest.json").is_file()
    return path


@pytest.fixture
def copy(tmp_path) -> Path:
    dest = tmp_path / "firmware-hooks"
    shutil.copytree(HOOKS, dest, ignore=shutil.ignore_patterns("ui-ready", "ui-ready-arm64"))
    return dest


def test_dir_is_deterministic_and_location_independent(copy):
    first = out_dir(HOOKS)
    assert out_dir(HOOKS) == first
    assert out_dir(copy) == first, "the hash must not depend on where the tree is"


@pytest.mark.parametrize(
    "edit",
    [
        "qemu-arm64/kernel.config",
        "qemu-arm64/u-boot-env.txt",
        "qemu-arm64/rootfs/sbin/init",
        "qemu-arm64/build.sh",
        "userspace/ui-ready.c",
        "linux/0002-init-do_mounts-bootrig-marker-when-mounting-the-root.patch",
    ],
)
def test_dir_changes_with_each_input(copy, edit):
    before = out_dir(copy)
    path = copy / edit
    assert path.is_file(), edit
    path.write_text(path.read_text() + "\n")
    assert out_dir(copy).name != before.name, f"editing {edit} kept the hash"


def test_dir_changes_with_a_new_patch_and_ignores_docs(copy):
    before = out_dir(copy)
    (copy / "qemu-arm64" / "README.md").write_text("edited\n")
    (copy / "linux" / "README.md").write_text("edited\n")
    assert out_dir(copy) == before, "documentation is not an input"
    (copy / "linux" / "0099-extra.patch").write_text("")
    assert out_dir(copy).name != before.name


def test_dir_changes_with_the_init_scripts_mode(copy):
    before = out_dir(copy)
    init = copy / "qemu-arm64" / "rootfs" / "sbin" / "init"
    init.chmod(0o644)
    assert out_dir(copy).name != before.name


def test_rejects_unknown_arguments():
    r = subprocess.run(["bash", str(HOOKS / BUILD), "--bogus"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown argument" in r.stderr


def test_612_dir_is_deterministic_and_its_own(copy):
    first = out_dir(HOOKS, BUILD_612)
    assert out_dir(HOOKS, BUILD_612) == first
    assert out_dir(copy, BUILD_612) == first, "the hash must not depend on where the tree is"
    assert first.name != out_dir(HOOKS).name


#: the inputs of each hooked.sh build: editing any one moves its hash
HOOKED_INPUTS = {
    BUILD_612: [
        "qemu-arm64/build-6.12.sh",
        "qemu-arm64/hooked.sh",
        "qemu-arm64/hooked-kernel.sh",
        "qemu-arm64/build-common.sh",
        "qemu-arm64/kernel.config",
        "qemu-arm64/u-boot-env.txt",
        "qemu-arm64/rootfs/sbin/init",
        "userspace/ui-ready.c",
        "linux/0003-init-main-bootrig-marker-right-before-running-init.patch",
    ],
    BUILD_ARMV7: [
        "qemu-armv7/build.sh",
        "qemu-armv7/kernel.config",
        "qemu-armv7/u-boot-env.txt",
        "qemu-arm64/hooked.sh",
        "qemu-arm64/hooked-kernel.sh",
        "qemu-arm64/build-common.sh",
        "qemu-arm64/cross-apt.sh",
        "qemu-arm64/rootfs/sbin/init",
        "userspace/ui-ready.c",
        "linux/0001-init-add-CONFIG_BOOTRIG_MARKERS-boot-time-markers.patch",
    ],
}


@pytest.mark.parametrize(
    ("script", "edit"),
    [(script, edit) for script, edits in HOOKED_INPUTS.items() for edit in edits],
    ids=str,
)
def test_hooked_dir_changes_with_each_input(copy, script, edit):
    before = out_dir(copy, script)
    path = copy / edit
    assert path.is_file(), edit
    path.write_text(path.read_text() + "\n")
    assert out_dir(copy, script).name != before.name, f"editing {edit} kept the hash"


def test_each_kernels_images_ignore_the_other_builds_own_files(copy):
    """6.1's key (which also names its kept kernel objects and the bisect repository)
    does not move with 6.12's scripts, nor 6.12's with build.sh."""
    before_61, before_612 = out_dir(copy), out_dir(copy, BUILD_612)
    for f in ("build-6.12.sh", "hooked.sh", "hooked-kernel.sh"):
        (copy / "qemu-arm64" / f).write_text("# edited\n")
    assert out_dir(copy) == before_61
    (copy / "qemu-arm64" / "build.sh").write_text("# edited\n")
    for f in ("build-6.12.sh", "hooked.sh", "hooked-kernel.sh"):
        shutil.copy(HOOKS / "qemu-arm64" / f, copy / "qemu-arm64" / f)
    assert out_dir(copy, BUILD_612) == before_612


def test_armv7_dir_is_deterministic_and_its_own(copy):
    first = out_dir(HOOKS, BUILD_ARMV7)
    assert out_dir(HOOKS, BUILD_ARMV7) == first
    assert out_dir(copy, BUILD_ARMV7) == first, "the hash must not depend on where the tree is"


def test_armv7_and_arm64_images_ignore_each_others_own_files(copy):
    """The armv7 key does not move with the arm64 kernel config, environment or build
    scripts, nor the arm64 keys with the armv7 folder."""
    before = {s: out_dir(copy, s) for s in (BUILD, BUILD_612, BUILD_ARMV7)}
    for f in ("kernel.config", "u-boot-env.txt", "build.sh", "build-6.12.sh"):
        (copy / "qemu-arm64" / f).write_text("# edited\n")
    assert out_dir(copy, BUILD_ARMV7) == before[BUILD_ARMV7]
    for f in ("kernel.config", "u-boot-env.txt", "build.sh", "build-6.12.sh"):
        shutil.copy(HOOKS / "qemu-arm64" / f, copy / "qemu-arm64" / f)
    for f in ("kernel.config", "u-boot-env.txt", "build.sh"):
        (copy / "qemu-armv7" / f).write_text("# edited\n")
    assert out_dir(copy, BUILD) == before[BUILD]
    assert out_dir(copy, BUILD_612) == before[BUILD_612]
