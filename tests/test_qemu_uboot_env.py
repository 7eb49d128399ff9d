"""`[qemu.uboot_env]`: U-Boot variables written into the QEMU target's environment flash
(docs/qemu.md). Checked on real QEMU and U-Boot: `bootdelay=1` shows U-Boot's countdown
and the analysis names it (`uboot_bootdelay`, about 1 s), the image's `bootdelay=0` not."""

from __future__ import annotations

import json
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.instruments.drivers import load_config
from rig.instruments.qemu.machine import QemuMachine
from rig.instruments.qemu.settings import QemuConfig
from rig.instruments.qemu.ubootenv import ENV_SIZE
from tests.qemu_env import RIG, qemu_config, uboot_only_images


def _run(cfg: Path, *sets: str) -> tuple[int, dict]:
    args = [a for s in sets for a in ("--set", s)]
    p = subprocess.run(
        [*RIG, "run", "--config", str(cfg), "--json", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert p.stdout, p.stderr[-3000:]
    return p.returncode, json.loads(p.stdout)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ('qemu.uboot_env={"a=b" = "1"}', r"key 'qemu\.uboot_env\.a=b': a U-Boot variable name"),
        ('qemu.uboot_env={"a b" = "1"}', r"key 'qemu\.uboot_env\.a b': a U-Boot variable name"),
        ('qemu.uboot_env.x="1\\n2"', r"key 'qemu\.uboot_env\.x': a U-Boot variable's value"),
        ('qemu.uboot_env.x="1\\u00002"', r"key 'qemu\.uboot_env\.x': a U-Boot variable's value"),
        ("qemu.uboot_env.bootdelay=1", r"key 'qemu\.uboot_env\.bootdelay': expected a string"),
    ],
)
def test_variables_an_environment_cannot_hold_are_config_errors(
    tmp_path: Path, setting: str, message: str
) -> None:
    cfg = qemu_config(tmp_path, uboot_only_images(tmp_path))
    with pytest.raises(ConfigError, match=message):
        load_config(cfg, overrides=(setting,))


def test_bootdelay_from_the_config_reaches_u_boot(tmp_path: Path) -> None:
    cfg = qemu_config(tmp_path, uboot_only_images(tmp_path))
    code, out = _run(cfg, 'qemu.uboot_env.bootdelay="1"')
    assert code == 0, out["report"]["outcome"]
    folder = Path(out["folder"])
    assert json.loads((folder / "qemu.json").read_text())["uboot_env"]["bootdelay"] == "1"
    log = (folder / "console.log").read_text(errors="replace")
    assert "Hit any key to stop autoboot:  1" in log
    found = [a for a in out["report"]["advisories"] if a["rule"] == "uboot_bootdelay"]
    assert len(found) == 1, out["report"]["advisories"]
    # The countdown is one second of U-Boot's timer; TCG adds a little around it.
    assert found[0]["gain_s"] == pytest.approx(1.0, abs=0.1)
    assert found[0]["knob"]["name"] == "bootdelay" and found[0]["knob"]["value"] == "0"
    # The table form of the same override.
    code, out = _run(cfg, 'qemu.uboot_env={bootdelay="0", verify="no"}')
    assert code == 0, out["report"]["outcome"]
    env = json.loads((Path(out["folder"]) / "qemu.json").read_text())["uboot_env"]
    assert env["bootdelay"] == "0" and env["verify"] == "no"
    assert not [a for a in out["report"]["advisories"] if a["rule"] == "uboot_bootdelay"]


def test_the_image_boots_without_a_countdown(tmp_path: Path) -> None:
    cfg = qemu_config(tmp_path, uboot_only_images(tmp_path))
    code, out = _run(cfg)
    assert code == 0, out["report"]["outcome"]
    assert not [a for a in out["report"]["advisories"] if a["rule"] == "uboot_bootdelay"]


def test_every_power_cycle_boots_the_same_flash_file(tmp_path: Path) -> None:
    """A QEMU power-off starts a new process: the environment flash is the one written
    when the machine was made, reused (not rewritten), so whatever U-Boot could save in
    it would persist across the power cycle."""
    images = uboot_only_images(tmp_path)
    machine = QemuMachine(QemuConfig(images=str(images), uboot_env={"verify": "no"}), images)
    try:
        flashes, stamps = [], []
        for _ in range(2):
            machine.launch()
            drive = next(a for a in machine.command if a.startswith("if=pflash"))
            path = Path(drive.rsplit("file=", 1)[1])
            flashes.append(path)
            stamps.append(path.stat().st_mtime_ns)
            assert parse_flash_env(path)["verify"] == "no"
        assert flashes[0] == flashes[1] and stamps[0] == stamps[1]
    finally:
        machine.close()


def parse_flash_env(path: Path) -> dict[str, str]:
    """The environment a pflash image holds (CRC checked), as U-Boot reads it."""
    data = path.read_bytes()[:ENV_SIZE]
    assert struct.unpack("<I", data[:4])[0] == zlib.crc32(data[4:]) & 0xFFFFFFFF
    body = data[4:].split(b"\0\0", 1)[0]
    return dict(kv.decode().split("=", 1) for kv in body.split(b"\0"))
