"""U-Boot's environment image as `mkenvimage` writes it (CRC32, then NUL-ended
`name=value` strings, an empty one, padding), on pflash 1: a variant needs no rebuild."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from rig.errors import ConfigError

#: qemu_arm64_defconfig and qemu_arm_defconfig: CONFIG_ENV_SIZE; pflash 1 of the virt board
#: is 64 MiB.
ENV_SIZE = 0x40000
FLASH_SIZE = 64 << 20


def parse_env_text(text: str, where: str) -> dict[str, str]:
    """`name=value` lines (mkenvimage's input); blank lines and `#` comments skipped."""
    env: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name or any(c.isspace() for c in name):
            raise ConfigError(f"{where}:{n}: expected name=value, found {line[:80]!r}")
        env[name] = value
    return env


def env_image(env: dict[str, str], size: int = ENV_SIZE, pad: int = 0xFF) -> bytes:
    """The environment block exactly as `mkenvimage -s SIZE` writes it (pad byte 0xff)."""
    body = bytearray()
    for name, value in env.items():
        if "\0" in name or "\0" in value or "=" in name:
            raise ConfigError(f"U-Boot env: variable {name!r} has a NUL or '=' in its name")
        body += f"{name}={value}".encode() + b"\0"
    body += b"\0"
    if len(body) > size - 4:
        raise ConfigError(f"U-Boot env: {len(body)} bytes do not fit in {size - 4}")
    data = bytes(body) + bytes([pad]) * (size - 4 - len(body))
    return struct.pack("<I", zlib.crc32(data) & 0xFFFFFFFF) + data


def write_flash(path: Path, env: dict[str, str]) -> None:
    """A pflash image holding the environment at offset 0, erased (0xff) elsewhere."""
    block = env_image(env)
    with path.open("wb") as f:
        f.write(block)
        f.write(b"\xff" * (FLASH_SIZE - len(block)))
