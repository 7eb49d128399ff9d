"""firmware-hooks/u-boot on QEMU virt: the patched U-Boot raises PL061 line 0 and prints
the tag right before booti enters a kernel; a bad setting is printed and the boot goes
on; the env-only recipe of the README works on Debian's unpatched U-Boot.

Needs the arm64 cross toolchain, QEMU and U-Boot's build dependencies; the patched
build (firmware-hooks/u-boot/build.sh, about a minute on two cores) is cached. Without
them the tests skip, or fail where the QEMU target is required (tests/require.py; `make
test` installs them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.require import require

REPO = Path(__file__).resolve().parents[1]
HOOKS = REPO / "firmware-hooks" / "u-boot"
STOCK_UBOOT = Path("/usr/lib/u-boot/qemu_arm64/u-boot.bin")  # Debian's u-boot-qemu
TOOLS = [
    "aarch64-linux-gnu-gcc",
    "qemu-system-aarch64",
    "mkenvimage",
    "make",
    "gcc",
    "bison",
    "flex",
    "bc",
    "patch",
]
MISSING = [t for t in TOOLS if shutil.which(t) is None]

pytestmark = pytest.mark.slow

EDGE = re.compile(r"@(\d+\.\d+):pl061_set_output \S+ setting output (\d) to 1")
TAG = "bootrig: marker bootm"
ENTERED = "dummy kernel: entered"


@pytest.fixture(scope="module")
def tools() -> None:
    if MISSING:
        require("qemu", f"needs {', '.join(MISSING)}")


@pytest.fixture(scope="module")
def patched_uboot(tools) -> Path:
    proc = subprocess.run(
        [str(HOOKS / "build.sh")], capture_output=True, text=True, timeout=1800, check=False
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return Path(proc.stdout.strip().splitlines()[-1]) / "u-boot.bin"


def boot(uboot: Path, env: str, out: Path) -> tuple[str, dict[int, float]]:
    """Run qemu-smoke.sh; the console text and the first rising edge per PL061 line."""
    out.mkdir()
    (out / "env-in.txt").write_text(env)
    smoke = [str(HOOKS / "qemu-smoke.sh"), "-b", str(uboot), "-e", str(out / "env-in.txt")]
    proc = subprocess.run(
        [*smoke, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    console = (out / "console.txt").read_text(errors="replace")
    assert proc.returncode == 0, f"the kernel was not entered:\n{console[-3000:]}\n{proc.stderr}"
    edges: dict[int, float] = {}
    for t, line in EDGE.findall((out / "trace.log").read_text(errors="replace")):
        edges.setdefault(int(line), float(t))
    return console, edges


ENV_HEAD = "bootdelay=0\nkernel_addr_r=0x40400000\n"
BOOTI = "booti ${kernel_addr_r} - ${fdtcontroladdr}"


def test_marker_rises_and_tags_right_before_the_kernel(patched_uboot, tmp_path):
    env = ENV_HEAD + "bootrig_mmio=9030400=17 9030004=1\n" + f"bootcmd={BOOTI}\n"
    console, edges = boot(patched_uboot, env, tmp_path / "ok")
    assert 0 in edges, "PL061 line 0 (bootm) never rose"
    assert 1 in edges, "the stand-in kernel did not raise line 1"
    assert edges[0] < edges[1]
    assert console.count(TAG) == 1
    # after booti's image and FDT work, before U-Boot's farewell and the kernel
    tag = console.index(TAG)
    assert console.rfind("Loading Device Tree") < tag
    assert tag < console.index("Starting kernel ...") < console.index(ENTERED)
    assert "bootrig: bootrig_" not in console, "no error expected"


def test_bad_settings_are_printed_and_the_boot_goes_on(patched_uboot, tmp_path):
    # a bad value in a later write: nothing of the setting may be written (no line 0,
    # although its direction write alone was fine); a GPIO name without DM_GPIO
    env = (
        ENV_HEAD
        + "bootrig_gpio=gpio0_0\n"
        + f"bootcmd=setenv bootrig_mmio 9030400=17,9030004=zz; {BOOTI}\n"
    )
    console, edges = boot(patched_uboot, env, tmp_path / "bad")
    assert "bootrig: bootrig_mmio: bad entry at 'zz'" in console
    assert "bootrig: bootrig_gpio needs CONFIG_DM_GPIO" in console
    assert console.count(TAG) == 1
    assert 0 not in edges
    assert console.index(TAG) < console.index(ENTERED)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("9030006=1", "address 9030006 is not 32-bit aligned"),
        ("9030004=100000000", "value 100000000 is wider than 32 bits"),
        (" ".join(["9030004=1"] * 9), "more than 8 writes"),
        ("9030004", "bad entry at '9030004'"),
    ],
)
def test_each_bad_mmio_value_is_named(patched_uboot, tmp_path, value, message):
    env = ENV_HEAD + f"bootrig_mmio={value}\nbootcmd={BOOTI}\n"
    console, edges = boot(patched_uboot, env, tmp_path / "v")
    assert f"bootrig: bootrig_mmio: {message}" in console
    assert console.count(TAG) == 1
    assert 0 not in edges


def test_nothing_configured_still_prints_the_tag(patched_uboot, tmp_path):
    console, edges = boot(patched_uboot, ENV_HEAD + f"bootcmd={BOOTI}\n", tmp_path / "none")
    assert console.count(TAG) == 1
    assert 0 not in edges


def test_env_only_recipe_on_debians_unpatched_uboot(tools, tmp_path):
    if not STOCK_UBOOT.exists():
        require("qemu", f"needs Debian's u-boot-qemu ({STOCK_UBOOT})")
    # README's no-rebuild recipe: the marker goes up in bootcmd, before booti's own work
    env = ENV_HEAD + "bootcmd=mw.l 0x09030400 0x17; mw.l 0x09030004 1; " + f"echo {TAG}; {BOOTI}\n"
    console, edges = boot(STOCK_UBOOT, env, tmp_path / "stock")
    assert console.count(TAG) == 1
    assert 0 in edges and 1 in edges and edges[0] < edges[1]
    # the recipe's marker comes before booti moves the image and the device tree
    assert console.index(TAG) < console.index("Loading Device Tree")
