from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Under CI=true or BOOTRIG_REQUIRE_ALL=1 a skipped test fails the session.
pytest_plugins = ["tests.skipguard"]


@pytest.fixture
def repo() -> Path:
    return REPO
