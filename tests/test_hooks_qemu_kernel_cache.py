"""build-6.12.sh caches its kernel on the kernel's inputs alone: with the kernel of the
built images in a private cache, an edit to the root filesystem makes new images in
seconds from that kernel, and an edit to a kernel input starts a kernel build."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.require import require

REPO = Path(__file__).resolve().parents[1]
HOOKS = REPO / "firmware-hooks"
BUILD_612 = Path("qemu-arm64") / "build-6.12.sh"


@pytest.fixture(scope="module")
def built() -> Path:
    """The 6.12 images folder (`make qemu-images`)."""
    r = subprocess.run(
        ["bash", str(HOOKS / BUILD_612), "--dir"], capture_output=True, text=True, timeout=300
    )
    if r.returncode != 0:
        require("qemu", f"6.12 images not built (make qemu-images): {r.stdout}{r.stderr}")
    return Path(r.stdout.split()[-1])


@pytest.fixture
def private(tmp_path: Path, built: Path) -> tuple[Path, dict[str, str], str]:
    """A copy of firmware-hooks, and an environment whose cache holds only the built
    images' kernel and busybox .deb (the arm64 package lists stay the shared ones)."""
    hooks = tmp_path / "firmware-hooks"
    shutil.copytree(HOOKS, hooks)
    cache = built.parents[1]
    key = json.loads((built / "manifest.json").read_text())["kernel_key"]
    mine = tmp_path / "cache"
    shutil.copytree(cache / "qemu-arm64-6.12-kernel" / key, mine / "qemu-arm64-6.12-kernel" / key)
    (mine / "debs").mkdir()
    for deb in (cache / "debs").glob("busybox-static_*.deb"):
        shutil.copy(deb, mine / "debs")
    apt = os.environ.get("BOOTRIG_APT_DIR", str(cache / "apt-arm64"))
    env = {**os.environ, "BOOTRIG_CACHE": str(mine), "BOOTRIG_APT_DIR": apt}
    return hooks, env, key


def test_rootfs_edit_reuses_the_kernel(private, built: Path) -> None:
    hooks, env, key = private
    init = hooks / "qemu-arm64" / "rootfs" / "sbin" / "init"
    init.write_text(init.read_text() + "# edited\n")
    r = subprocess.run(
        ["bash", str(hooks / BUILD_612)], capture_output=True, text=True, env=env, timeout=600
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"kernel {key} from the kernel cache" in r.stderr
    assert "building the linux-source-6.12 kernel" not in r.stderr
    out = Path(r.stdout.split()[-1])
    assert out.parent == Path(env["BOOTRIG_CACHE"]) / "qemu-arm64-6.12"
    assert out.name != built.name, "the rootfs is an input of the images"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kernel_key"] == key
    assert (out / "Image").read_bytes() == (built / "Image").read_bytes()
    assert (out / "kernel.config").read_bytes() == (built / "kernel.config").read_bytes()


def test_kernel_input_edit_builds_the_kernel(private) -> None:
    """Stopped as soon as it starts extracting the source: the key has moved."""
    hooks, env, _ = private
    patch = next((hooks / "linux").glob("0003-*.patch"))
    patch.write_text(patch.read_text() + "\n")
    p = subprocess.Popen(
        ["bash", str(hooks / BUILD_612)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own group: the tar it starts goes with it
    )
    seen = []
    try:
        assert p.stderr is not None
        for line in p.stderr:
            seen.append(line)
            if "extracting" in line or "from the kernel cache" in line:
                break
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    assert any("extracting /usr/src/linux-source-6.12.tar.xz" in s for s in seen), seen
