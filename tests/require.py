"""What a test needs from the machine (a tool, a Debian package, the QEMU images, labgrid's
environment): without it the test skips on a developer's machine, but fails where the
machine is supposed to have it, so a CI job cannot pass by skipping.

Required when `CI` is true (GitHub, GitLab and most CI systems set `CI=true`), when
`BOOTRIG_REQUIRE_ALL=1`, or when `BOOTRIG_REQUIRE_<KIND>=1` for the kind at hand.
`make pytest` installs everything and sets BOOTRIG_REQUIRE_ALL=1 (see the Makefile).

Kinds, each what one `make` target provides:
  qemu     the QEMU target: its Debian packages (the Makefile's APT_QEMU: QEMU, U-Boot,
           the arm64 cross toolchain, linux-source-6.1 and -6.12, ...), the arm64 package lists and
           the images `make qemu-images` builds
  labgrid  labgrid's own environment (`make labgrid`)
  root     root's privileges, to mount a tmpfs (a full disk on demand); `make test` runs
           as root (README)
"""

from __future__ import annotations

import os
from typing import Literal, NoReturn

import pytest

Kind = Literal["qemu", "labgrid", "root"]
KINDS: tuple[Kind, ...] = ("qemu", "labgrid", "root")

TRUE = frozenset({"1", "true", "yes", "on"})


def _true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in TRUE


def strict() -> bool:
    """True where no test may skip: CI, or BOOTRIG_REQUIRE_ALL=1."""
    return _true("CI") or _true("BOOTRIG_REQUIRE_ALL")


def required(kind: Kind) -> bool:
    assert kind in KINDS, kind
    return strict() or _true(f"BOOTRIG_REQUIRE_{kind.upper()}")


def require(kind: Kind, why: str) -> NoReturn:
    """The test cannot run here because `why`: a failure where `kind` is required, else
    a skip."""
    if required(kind):
        env = f"BOOTRIG_REQUIRE_{kind.upper()}=1, BOOTRIG_REQUIRE_ALL=1 or CI=true"
        pytest.fail(f"required ({env}): {why}", pytrace=False)
    pytest.skip(why)
