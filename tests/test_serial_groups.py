"""tests/conftest.py's SERIAL_MODULES: the test modules that boot QEMU or build a kernel,
kept on one pytest-xdist worker so two TCG guests never share the two cores. A module
that starts using the QEMU helpers without joining the list would run beside another
boot; a renamed module would silently leave it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import SERIAL_MODULES

TESTS = Path(__file__).resolve().parent

# What boots the QEMU target from a test: the shared helpers, the machine itself, the
# QEMU bisect repository (test_qemu_stock.py, which boots its own way, is listed by hand).
BOOTS = re.compile(
    r"from tests\.qemu_env import [^\n]*\b(rig_run|rig_soak|qemu_config|uboot_only_images)\b"
    r"|from rig\.instruments\.qemu\.machine import"
    r"|\bqemu_bisect_repo\b"
)


def test_every_listed_module_exists() -> None:
    missing = sorted(n for n in SERIAL_MODULES if not (TESTS / n).is_file())
    assert not missing, f"tests/conftest.py SERIAL_MODULES names no module: {missing}"


def test_every_module_that_boots_qemu_is_listed() -> None:
    booting = {p.name for p in TESTS.glob("test_*.py") if BOOTS.search(p.read_text())}
    assert booting, "the pattern finds no QEMU test: it no longer matches how tests boot"
    assert not booting - SERIAL_MODULES, sorted(booting - SERIAL_MODULES)
