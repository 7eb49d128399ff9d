"""firmware-hooks/userspace/ui-ready.c: builds warning-free for the host and static for
arm64 and armhf (the QEMU targets), and fails cleanly when it cannot do its job."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from tests.require import require

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "firmware-hooks" / "userspace" / "ui-ready.c"
#: Debian architecture -> cross gcc, ELF class (1: 32-bit, 2: 64-bit), e_machine
CROSS = {"arm64": ("aarch64-linux-gnu-gcc", 2, 183), "armhf": ("arm-linux-gnueabihf-gcc", 1, 40)}
FLAGS = ["-O2", "-Wall", "-Wextra", "-Werror"]


@pytest.fixture(scope="module")
def host_binary(tmp_path_factory) -> Path:
    if not shutil.which("gcc"):
        require("qemu", "needs the host gcc (Debian package gcc)")
    out = tmp_path_factory.mktemp("ui-ready") / "ui-ready"
    r = subprocess.run(["gcc", *FLAGS, "-o", str(out), str(SRC)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def run(binary: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=10)


def test_uses_only_libc_and_the_gpio_uapi():
    includes = [line for line in SRC.read_text().splitlines() if line.startswith("#include")]
    assert "#include <linux/gpio.h>" in includes
    assert all(i.startswith("#include <") for i in includes), includes
    assert "GPIO_V2_GET_LINE_IOCTL" in SRC.read_text()


def test_missing_chip_fails_naming_the_path(host_binary, tmp_path):
    chip = tmp_path / "no-such-gpiochip"
    r = run(host_binary, "--chip", str(chip))
    assert r.returncode != 0
    assert str(chip) in r.stderr and "No such file" in r.stderr, r.stderr
    assert r.stdout == ""


def test_not_a_gpio_chip_fails(host_binary):
    r = run(host_binary, "-c", "/dev/null", "-l", "4")
    assert r.returncode != 0
    assert "/dev/null" in r.stderr and "line 4" in r.stderr, r.stderr


@pytest.mark.parametrize("bad", ["x", "-1", "4x", "99999999999"])
def test_bad_line_offset_is_a_usage_error(host_binary, bad):
    r = run(host_binary, "--line", bad)
    assert r.returncode == 2
    assert f"bad line offset '{bad}'" in r.stderr


def test_help_and_unknown_options(host_binary):
    r = run(host_binary, "--help")
    assert r.returncode == 0 and "/dev/gpiochip0" in r.stdout and "(default 4)" in r.stdout
    assert run(host_binary, "--bogus").returncode == 2
    assert run(host_binary, "extra").returncode == 2


@pytest.mark.parametrize("arch", sorted(CROSS))
def test_cross_compiles_static(tmp_path, arch):
    gcc, elf_class, machine = CROSS[arch]
    if not shutil.which(gcc):
        require("qemu", f"needs {gcc} (Debian package gcc-{gcc.removesuffix('-gcc')})")
    out = tmp_path / "ui-ready"
    r = subprocess.run(
        [gcc, *FLAGS, "-static", "-o", str(out), str(SRC)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == elf_class
    e_machine = struct.unpack_from("<H", data, 18)[0]
    assert e_machine == machine, f"e_machine {e_machine}, not {arch}'s {machine}"
    # static: no program header of type PT_INTERP (3); the header's offsets by ELF class
    if elf_class == 2:
        phoff = struct.unpack_from("<Q", data, 32)[0]
        phentsize, phnum = struct.unpack_from("<HH", data, 54)
    else:
        phoff = struct.unpack_from("<I", data, 28)[0]
        phentsize, phnum = struct.unpack_from("<HH", data, 42)
    types = [struct.unpack_from("<I", data, phoff + i * phentsize)[0] for i in range(phnum)]
    assert 3 not in types, "dynamically linked"


def test_makefile_builds_host_binary(tmp_path):
    if not shutil.which("make"):
        require("qemu", "needs make (Debian package make)")
    work = tmp_path / "userspace"
    shutil.copytree(SRC.parent, work)
    r = subprocess.run(["make", "-C", str(work)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "ui-ready").exists()
