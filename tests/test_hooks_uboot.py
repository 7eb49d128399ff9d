"""firmware-hooks/u-boot: the patches apply to U-Boot as Debian 12 ships it, and the
marker stays out of every build that does not ask for it.

The U-Boot source is Debian's `u-boot` source package with Debian's own patches applied
(firmware-hooks/u-boot/fetch-source.sh), fetched once into the bootrig cache. The
patches are applied in name order to a scratch copy of the files they touch; the Kconfig
guard is checked by evaluating the patched Kconfig tree with U-Boot's own kconfiglib, the
way buildman reads defconfigs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HOOKS = REPO / "firmware-hooks" / "u-boot"
PATCHES = sorted(HOOKS.glob("*.patch"))
FETCH = HOOKS / "fetch-source.sh"
DEBIAN_VERSION = "2023.01+dfsg-2+deb12u3"


def fetch_uboot_source() -> Path:
    """The cached Debian U-Boot tree (fetched on first use: about 15 s)."""
    try:
        proc = subprocess.run(
            ["sh", str(FETCH)], capture_output=True, text=True, timeout=900, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail("fetch-source.sh did not finish in 900 s")
    if proc.returncode != 0:
        pytest.fail(
            f"fetch-source.sh failed ({proc.returncode}); U-Boot source is needed to check "
            f"the patches:\n{proc.stderr[-3000:]}"
        )
    tree = Path(proc.stdout.strip().splitlines()[-1])
    assert (tree / ".bootrig-complete").read_text().strip() == DEBIAN_VERSION
    return tree


def touched_paths(patch: Path) -> list[str]:
    """Paths (relative to the tree top, -p1) a patch creates or changes."""
    paths = []
    for line in patch.read_text().splitlines():
        if line.startswith("+++ ") and not line.startswith("+++ /dev/null"):
            paths.append(line[4:].split("\t")[0].split("/", 1)[1])
    return paths


def overlay(tree: Path, scratch: Path, paths: list[str]) -> None:
    """Make `scratch` look like `tree` (symlinks) with real copies of `paths`, so that
    patching them leaves the cached tree alone."""
    scratch.mkdir(parents=True, exist_ok=True)

    def realise(rel: Path) -> None:
        # turn scratch/rel into a real directory of symlinks, parents first
        if rel == Path("."):
            here, there = scratch, tree
        else:
            realise(rel.parent)
            here, there = scratch / rel, tree / rel
        if here.is_symlink():
            here.unlink()
        here.mkdir(exist_ok=True)
        if there.is_dir():
            for child in there.iterdir():
                link = here / child.name
                if not link.exists() and not link.is_symlink():
                    link.symlink_to(child)

    for p in paths:
        rel = Path(p)
        realise(rel.parent)
        target = scratch / rel
        if target.is_symlink():
            target.unlink()
            shutil.copy2(tree / rel, target)


@pytest.fixture(scope="module")
def uboot_tree() -> Path:
    return fetch_uboot_source()


@pytest.fixture(scope="module")
def applied(uboot_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Dry-run then apply each patch in name order on the overlay; record what patch said."""
    scratch = tmp_path_factory.mktemp("u-boot")
    paths = [p for patch in PATCHES for p in touched_paths(patch)]
    overlay(uboot_tree, scratch, paths)
    results = {}
    for patch in PATCHES:
        args = ["patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch"]
        args += ["-d", str(scratch), "-i", str(patch)]
        dry = subprocess.run([*args, "--dry-run"], capture_output=True, text=True, check=False)
        real = None
        if dry.returncode == 0:
            real = subprocess.run(args, capture_output=True, text=True, check=False)
        results[patch.name] = (dry, real)
    return {"tree": scratch, "results": results}


def test_patch_series_is_named_for_order():
    assert PATCHES, "no firmware-hooks/u-boot/*.patch"
    for patch in PATCHES:
        assert re.fullmatch(r"\d{4}-[A-Za-z0-9-]+\.patch", patch.name), patch.name


def test_patches_apply_cleanly_in_name_order(applied):
    for name, (dry, real) in applied["results"].items():
        out = dry.stdout + dry.stderr
        assert dry.returncode == 0, f"{name} does not apply (patch -p1 --dry-run):\n{out}"
        # fuzz means the context moved: the hunk may land in the wrong place
        assert "fuzz" not in out, f"{name} applies only with fuzz:\n{out}"
        assert real is not None and real.returncode == 0, f"{name}: {real and real.stderr}"
    assert not list(applied["tree"].rglob("*.rej"))


def test_hook_sits_in_boot_selected_os_before_the_os_is_entered(applied):
    src = (applied["tree"] / "boot" / "bootm_os.c").read_text()
    body = re.search(r"\nint boot_selected_os\(.*?\n}\n", src, re.S)
    assert body, "boot_selected_os() not found in boot/bootm_os.c"
    text = body.group(0)
    hook = text.find('bootrig_marker("bootm")')
    assert hook != -1, "boot_selected_os() does not call bootrig_marker"
    assert hook < text.find("boot_fn(state, argc, argv, images);")
    guard = text.rfind("if (", 0, hook)
    condition = text[guard:hook]
    assert "IS_ENABLED(CONFIG_BOOTRIG_MARKER)" in condition
    assert "BOOTM_STATE_OS_GO" in condition, "the marker must fire only when really booting"
    makefile = (applied["tree"] / "boot" / "Makefile").read_text()
    assert "obj-$(CONFIG_BOOTRIG_MARKER) += bootrig.o" in makefile


def test_marker_prints_the_contract_tag(applied):
    src = (applied["tree"] / "boot" / "bootrig.c").read_text()
    assert 'printf("bootrig: marker %s\\n", name);' in src
    # GPIO first, then the tag: the last line driving the marker precedes the print
    assert src.rfind("writel(") < src.rfind('printf("bootrig: marker %s')
    assert src.rfind("dm_gpio_set_dir_flags(") < src.rfind('printf("bootrig: marker %s')
    for name in ("bootrig_gpio", "bootrig_mmio"):
        assert f'env_get("{name}")' in src


KCONFIG_PROBE = r"""
import json, os, sys
sys.path.insert(0, "tools/buildman")
import kconfiglib
os.environ.update(srctree=os.getcwd(), UBOOTVERSION="dummy", KCONFIG_OBJDIR="")
conf = kconfiglib.Kconfig(warn=False)
out = {}


def write(conf):
    conf.write_config(".bootrig-probe.config", header="", save_old=False, verbose=False)
    with open(".bootrig-probe.config") as f:
        return [line.strip() for line in f if "BOOTRIG" in line]


for defconfig, extra in json.loads(sys.argv[1]):
    conf.load_config("configs/" + defconfig, replace=True)
    for line in extra:
        name, value = line.split("=", 1)
        conf.syms[name.removeprefix("CONFIG_")].set_value(value)
    marker = conf.syms["BOOTRIG_MARKER"]
    out[defconfig + " " + " ".join(extra)] = {
        "arch": conf.syms["SYS_ARCH"].str_value,
        "type": kconfiglib.TYPE_TO_STR[marker.orig_type],
        "defaults": [kconfiglib.expr_str(d[0]) for d in marker.defaults],
        "marker": marker.str_value,
        "gpio": conf.syms["BOOTRIG_MARKER_GPIO"].str_value,
        "gpio_visible": conf.syms["BOOTRIG_MARKER_GPIO"].visibility,
        "mmio": conf.syms["BOOTRIG_MARKER_MMIO"].str_value,
        "dotconfig": write(conf),
    }
print(json.dumps(out))
"""


def kconfig(tree: Path, cases: list[tuple[str, list[str]]]) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", KCONFIG_PROBE, json.dumps(cases)],
        cwd=tree,
        # no CC: the compiler probes in U-Boot's Kconfig then answer "no compiler",
        # as they do for buildman; the marker does not depend on them
        env={k: v for k, v in os.environ.items() if k != "CC"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_kconfig_marker_is_off_unless_asked_for(applied):
    tree = applied["tree"]
    cases = [
        ("qemu_arm64_defconfig", []),
        ("sandbox_defconfig", []),
        ("qemu_arm64_defconfig", ["CONFIG_BOOTRIG_MARKER=y"]),
    ]
    got = kconfig(tree, cases)
    off_arm = got["qemu_arm64_defconfig "]
    assert off_arm["arch"] == "arm", "the probe did not read the board's config"
    assert off_arm["type"] == "bool"
    assert off_arm["defaults"] == ["n"]
    assert off_arm["marker"] == "n"
    assert off_arm["gpio_visible"] == 0, "the GPIO setting must hide behind the bool"
    assert off_arm["dotconfig"] == ["# CONFIG_BOOTRIG_MARKER is not set"]
    assert got["sandbox_defconfig "]["marker"] == "n"
    on = got["qemu_arm64_defconfig CONFIG_BOOTRIG_MARKER=y"]
    assert on["marker"] == "y"
    assert "CONFIG_BOOTRIG_MARKER=y" in on["dotconfig"]
    assert on["gpio"] == "" and on["mmio"] == "", "a build must not pick a line by itself"


def test_no_shipped_defconfig_turns_the_marker_on(uboot_tree: Path):
    # the patch adds no defconfig lines; Debian's tree has none either
    for patch in PATCHES:
        assert not [p for p in touched_paths(patch) if p.startswith("configs/")]
    hits = subprocess.run(
        ["grep", "-rl", "CONFIG_BOOTRIG_MARKER", str(uboot_tree / "configs")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert hits.returncode == 1, hits.stdout
