"""A QEMU board made of real U-Boot only: its environment raises every marker line and
prints every tag, so the rig's QEMU instruments are tested without the kernel build."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e import REPO

# PL061 at 0x09030000: direction at +0x400, data at +(mask << 2).
RIG = [sys.executable, "-m", "rig"]

UBOOT_ONLY_ENV = """\
bootdelay=0
bootcmd=mw.l 0x09030400 0x17; sleep 0.2; mw.l 0x09030004 1; echo bootrig: marker bootm; \
sleep 0.3; mw.l 0x09030008 2; echo bootrig: marker do_mount_root; sleep 0.1; \
mw.l 0x09030010 4; echo bootrig: marker kernel_init; sleep 0.1; echo Starting application; \
sleep 0.2; mw.l 0x09030040 0x10; echo bootrig: marker ui_ready
"""


def uboot_only_images(tmp: Path, env: str = UBOOT_ONLY_ENV) -> Path:
    images = tmp / "images"
    images.mkdir()
    (images / "Image").write_bytes(b"")
    with (images / "rootfs.img").open("wb") as f:
        f.truncate(1 << 20)
    (images / "u-boot-env.txt").write_text(env)
    return images


def saveenv_uboot() -> Path:
    """The QEMU target's U-Boot that can saveenv (firmware-hooks/u-boot/
    build-qemu-saveenv.sh, built once and cached); skipped or failed, as tests/require.py
    says, without the cross compiler and QEMU."""
    import shutil

    from tests.require import require

    missing = [t for t in ("aarch64-linux-gnu-gcc", "qemu-system-aarch64", "make", "bison",
                           "flex", "bc") if shutil.which(t) is None]  # fmt: skip
    if missing:
        require("qemu", f"needs {', '.join(missing)}")
    script = REPO / "firmware-hooks" / "u-boot" / "build-qemu-saveenv.sh"
    p = subprocess.run([str(script)], capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr[-4000:]
    return Path(p.stdout.strip().splitlines()[-1]) / "u-boot.bin"


def qemu_config(
    tmp: Path,
    images: Path | str = "auto",
    analyzer: str = "qemu",
    extra: str = "",
    base: str = "qemu-arm64.toml",
) -> Path:
    """A copy of config/BASE in TMP, its results in TMP/results; its build_script (relative
    to config/) made absolute, so `images = "auto"` still finds the build."""
    text = (REPO / "config" / base).read_text()
    text = text.replace('build_script = "../', f'build_script = "{REPO}/')
    text = text.replace('results_dir = "../results"', f'results_dir = "{tmp / "results"}"')
    text = text.replace('images = "auto"', f'images = "{images}"')
    if analyzer != "qemu":
        text = text.replace('driver = "qemu"          # QEMU', f'driver = "{analyzer}"  # QEMU')
    path = tmp / "qemu.toml"
    path.write_text(text + extra)
    return path


def rig_soak(cfg: Path, cycles: int, results: Path) -> list[Path]:
    """`rig soak --cycles N`; the folders of its boots, oldest first."""
    p = subprocess.run(
        [*RIG, "soak", "--config", str(cfg), "--cycles", str(cycles), "--json"],
        capture_output=True,
        text=True,
        timeout=120 * cycles,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return sorted(r.parent for r in results.glob("soak-*/2*/run.json"))


def rig_run(cfg: Path, timeout: float = 180) -> tuple[int, dict]:
    """`rig run --json`: its exit code and output."""
    p = subprocess.run(
        [*RIG, "run", "--config", str(cfg), "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert p.stdout, p.stderr[-3000:]
    return p.returncode, json.loads(p.stdout)
