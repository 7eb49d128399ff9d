from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Under CI=true or BOOTRIG_REQUIRE_ALL=1 a skipped test fails the session.
pytest_plugins = ["tests.skipguard"]

# Modules whose tests boot real firmware under QEMU (TCG: a core each), build a kernel,
# need the images' package lists (test_real_systemd), or bound how soon the host serves a
# process (a read's lateness, a relay command's latency): marked `serial`. `make pytest`
# runs the others on pytest-xdist workers while the QEMU images build, then these in one
# process, one at a time: what they measure widens on a busy host.
SERIAL_MODULES = frozenset(
    {
        "test_arm_before_off.py",
        "test_bisect_qemu.py",
        "test_hooks_qemu_build.py",
        "test_hooks_qemu_kernel_cache.py",
        "test_hooks_uboot_qemu.py",
        "test_power_window.py",
        "test_qemu_landmarks_612.py",
        "test_qemu_real.py",
        "test_qemu_stock.py",
        "test_qemu_uboot.py",
        "test_qemu_uboot_env.py",
        "test_real_systemd.py",
        "test_reset_boards.py",
        "test_sim_console.py",
        "test_target_claim.py",
        "test_try_qemu.py",
        "test_try_uboot_console.py",
        "test_uboot_console.py",
        "test_uboot_console_saveenv.py",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SERIAL_MODULES:
            item.add_marker(pytest.mark.serial)


@pytest.fixture
def repo() -> Path:
    return REPO
