"""The `[qemu]` table of a rig config: where the images are and how QEMU is started."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from rig import names
from rig.config.tomlcheck import Table
from rig.errors import ConfigError

#: Which PL061 line each hook raises on the QEMU target (firmware-hooks/qemu-arm64).
#: Line 3 is the virt board's power button, so it is skipped.
DEFAULT_GPIO = {"bootm": 0, "do_mount_root": 1, "kernel_init": 2, "ui_ready": 4}
#: Device channels of the capture the trace becomes (bit i of each sample).
CAPTURE_CHANNELS = {names.POWER: 0, "bootm": 1, "do_mount_root": 2, "kernel_init": 3, "ui_ready": 4}
BUILD_SCRIPT = Path(__file__).resolve().parents[3] / "firmware-hooks" / "qemu-arm64" / "build.sh"
UBOOT_BIN = Path("/usr/lib/u-boot/qemu_arm64/u-boot.bin")


@dataclass(frozen=True)
class QemuConfig:
    images: str  # "auto" (build.sh's cache folder) or a folder
    binary: str = "qemu-system-aarch64"
    machine: str = "virt,acpi=off"  # ACPI replaces the PL061 by a GED when firmware loads
    cpu: str = "cortex-a57"
    memory_mb: int = 256
    smp: int = 1
    bios: Path = UBOOT_BIN
    kernel_args: str = ""  # appended to the environment's bootargs (a variant's knob)
    uboot_env: dict[str, str] = field(default_factory=dict)  # overrides, name -> value
    # the machine's private environment flash attached writable: saveenv keeps across its
    # power cycles (the console path, docs/uboot-env.md); measured boots keep it read-only
    env_writable: bool = False
    gpio: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_GPIO))
    base: Path = Path(".")
    # what `images = "auto"` asks for its cache folder: the hooked build or a variant's
    build_script: Path = BUILD_SCRIPT

    def image_dir(self) -> Path:
        """The folder with Image, rootfs.img and u-boot-env.txt; missing: a ConfigError
        naming what to run."""
        script = self.build_script
        if self.images != "auto":
            folder = (self.base / self.images).resolve()
        else:
            try:
                out = subprocess.run(
                    ["bash", str(script), "--dir"],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired) as e:
                raise ConfigError(f"qemu.images = 'auto': {script}: {e}") from None
            lines = out.stdout.strip().splitlines()
            if out.returncode != 0 or not lines:
                where = lines[-1] if lines else "(no folder)"
                raise ConfigError(
                    f"qemu.images = 'auto': the QEMU images are not built ({where}); "
                    f"run `{self.build_command()}` first"
                )
            folder = Path(lines[-1])
        for name in ("Image", "rootfs.img", "u-boot-env.txt"):
            if not (folder / name).is_file():
                raise ConfigError(
                    f"qemu.images: {folder / name} is missing; run `{self.build_command()}` first"
                )
        return folder

    def build_command(self) -> str:
        if self.build_script == BUILD_SCRIPT:
            return "make qemu-images"
        return f"bash {self.build_script}"


def _env_value(e: Table, name: str) -> str:
    """One `[qemu.uboot_env]` variable: what the environment (NUL-separated `name=value`
    strings) and U-Boot's `setenv` can hold; u-boot-env.txt is one variable a line."""
    if not name or "=" in name or any(c.isspace() or c == "\0" for c in name):
        e.fail(name, "a U-Boot variable name has no '=', NUL or white space")
    value = e.str(name)
    if any(c in value for c in "\0\n\r"):
        e.fail(name, "a U-Boot variable's value has no NUL or line break")
    return value


def parse_qemu(t: Table, base: Path) -> QemuConfig:
    images = t.str("images", "auto")
    gpio = dict(DEFAULT_GPIO)
    g = t.table("gpio")
    given: dict[str, str] = {}  # marker -> the key that gave its line
    for name in list(g.data):
        canon = names.canonical_marker(name)
        if canon not in names.MARKERS:
            g.fail(name, f"expected a marker name ({', '.join(names.MARKERS)}), found {name!r}")
        line = g.int(name, min=0)
        if line > 7 or line == 3:
            g.error(name, "a PL061 line 0..7 other than 3 (the power button)", line)
        if canon in given:  # kernel_init and init_post: one marker
            g.error(name, f"no second line for {canon} ({given[canon]} gives one)", line)
        given[canon] = name
        gpio[canon] = line
    g.done()
    e = t.table("uboot_env")
    env = {name: _env_value(e, name) for name in list(e.data)}
    e.done()
    cfg = QemuConfig(
        images=images,
        binary=t.str("binary", "qemu-system-aarch64"),
        machine=t.str("machine", "virt,acpi=off"),
        cpu=t.str("cpu", "cortex-a57"),
        memory_mb=t.int("memory_mb", 256, min=64),
        smp=t.int("smp", 1, min=1),
        bios=(base / t.str("bios", str(UBOOT_BIN))).resolve(),
        kernel_args=t.str("kernel_args", ""),
        uboot_env=env,
        env_writable=t.bool("env_writable", False),
        gpio=gpio,
        base=base,
        build_script=(base / t.str("build_script", str(BUILD_SCRIPT))).resolve(),
    )
    t.done()
    lines = list(cfg.gpio.values())
    if len(set(lines)) != len(lines):
        raise ConfigError(f"{t.path}: key 'qemu.gpio': two markers share a PL061 line")
    return cfg
