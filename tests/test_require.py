"""tests/require.py and tests/skipguard.py: a test that lacks its tool skips on a developer's
machine and fails where it is required (CI=true, BOOTRIG_REQUIRE_ALL=1 or
BOOTRIG_REQUIRE_<KIND>=1), and under CI=true or BOOTRIG_REQUIRE_ALL=1 no skip of any kind
lets the session pass. Each case is a real pytest run of a scratch folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import REPO

NEEDS_TOOL = """\
import shutil

from tests.require import require


def test_needs_a_tool():
    if shutil.which("bootrig-no-such-tool") is None:
        require("qemu", "needs bootrig-no-such-tool")


def test_runs():
    pass
"""

OTHER_SKIPS = """\
import pytest


@pytest.mark.skipif(True, reason="a skipif")
def test_skipif():
    pass


@pytest.mark.parametrize("x", [])
def test_empty_parameter_set(x):
    pass


def test_runs():
    pass
"""


def pytest_run(tmp: Path, source: str, *args: str, **env: str) -> tuple[int, dict[str, int], str]:
    """Run pytest (with `args`) on one scratch test file with the skip guard loaded (as
    conftest.py loads it) and `env` on top of an environment that requires nothing: the
    exit code, the outcome counts, the output."""
    (tmp / "pytest.ini").write_text("[pytest]\n")
    (tmp / "test_scratch.py").write_text(source)
    clean = {
        k: v for k, v in os.environ.items() if k != "CI" and not k.startswith("BOOTRIG_REQUIRE_")
    }
    clean["PYTHONPATH"] = str(REPO)
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.skipguard", "-p", "no:cacheprovider",
         "-rs", *args, str(tmp / "test_scratch.py")],
        cwd=tmp, env={**clean, **env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped)", p.stdout)}
    return p.returncode, counts, p.stdout + p.stderr


def test_a_missing_tool_skips_where_nothing_is_required(tmp_path: Path) -> None:
    code, counts, out = pytest_run(tmp_path, NEEDS_TOOL)
    assert code == 0 and counts == {"passed": 1, "skipped": 1}, out
    assert "needs bootrig-no-such-tool" in out


@pytest.mark.parametrize(
    "env",
    [
        {"CI": "true"},
        {"CI": "TRUE"},
        {"CI": "1"},
        {"CI": "yes"},
        {"BOOTRIG_REQUIRE_ALL": "1"},
        {"BOOTRIG_REQUIRE_QEMU": "1"},
    ],
    ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()),
)
def test_a_missing_tool_fails_where_it_is_required(tmp_path: Path, env: dict[str, str]) -> None:
    code, counts, out = pytest_run(tmp_path, NEEDS_TOOL, **env)
    assert code == 1 and counts == {"passed": 1, "failed": 1}, out
    assert "required (BOOTRIG_REQUIRE_QEMU=1" in out and "needs bootrig-no-such-tool" in out


@pytest.mark.parametrize(
    "env", [{"CI": "false"}, {"CI": "0"}, {"CI": ""}, {"BOOTRIG_REQUIRE_LABGRID": "1"}]
)
def test_other_settings_and_kinds_do_not_require_it(tmp_path: Path, env: dict[str, str]) -> None:
    code, counts, out = pytest_run(tmp_path, NEEDS_TOOL, **env)
    assert code == 0 and counts == {"passed": 1, "skipped": 1}, out


def test_any_skip_fails_the_session_under_ci(tmp_path: Path) -> None:
    code, counts, out = pytest_run(tmp_path, OTHER_SKIPS)
    assert code == 0 and counts == {"passed": 1, "skipped": 2}, out
    for env in ({"CI": "true"}, {"BOOTRIG_REQUIRE_ALL": "1"}):
        code, counts, out = pytest_run(tmp_path, OTHER_SKIPS, **env)
        assert code == 1 and counts == {"passed": 1, "skipped": 2}, (env, out)
        assert "2 skipped under CI=true or BOOTRIG_REQUIRE_ALL=1" in out, out
        assert "test_scratch.py::test_skipif: a skipif" in out, out
    # One kind required is not "every test must run": a plain skip still passes.
    code, counts, out = pytest_run(tmp_path, OTHER_SKIPS, BOOTRIG_REQUIRE_QEMU="1")
    assert code == 0, out


MODULE_SKIP = """\
import pytest

pytest.skip("a module without its tool", allow_module_level=True)


def test_never_runs():
    pass
"""


@pytest.mark.parametrize("source", [OTHER_SKIPS, MODULE_SKIP], ids=["tests", "module"])
def test_a_skip_on_an_xdist_worker_fails_the_session(tmp_path: Path, source: str) -> None:
    """`make pytest` runs the tests on pytest-xdist workers: a skip there is reported to
    the controller, whose session must fail as a single process's would."""
    code, _counts, out = pytest_run(tmp_path, source, "-n", "2", BOOTRIG_REQUIRE_ALL="1")
    assert code == 1, out
    assert "skipped under CI=true or BOOTRIG_REQUIRE_ALL=1" in out, out
    code, _counts, out = pytest_run(tmp_path, source, "-n", "2")
    # Nothing required, the skips pass (xdist ends a run of one skipped module with
    # "no tests collected").
    assert code in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), out
    assert "skipped under" not in out, out
