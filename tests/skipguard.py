"""The last guard against a CI run that passes by skipping: where every test is required
to run (tests/require.py: CI=true or BOOTRIG_REQUIRE_ALL=1), a session with any skipped
test fails, whatever the skip's reason (a missing tool, a `skipif`, an empty parameter
set from a missing data folder). No test of this project has a reason to skip there:
`make pytest` installs everything the tests need.

A plugin of its own (loaded by tests/conftest.py) so a test can load it into a pytest
run of a scratch folder (`-p tests.skipguard`)."""

from __future__ import annotations

import pytest

from tests.require import strict


class SkipGuard:
    def __init__(self) -> None:
        self.skipped: list[str] = []

    def _note(self, report: pytest.CollectReport | pytest.TestReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            where = report.nodeid or "collection"
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            reason = reason.removeprefix("Skipped: ")
            self.skipped.append(f"{where}: {reason}")

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._note(report)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._note(report)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # NO_TESTS_COLLECTED too: under pytest-xdist a run whose every module skipped
        # at collection ends so, and it must fail as loudly as one that ran and skipped.
        ok = (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
        if self.skipped and session.exitstatus in ok:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.skipped:
            terminalreporter.section("skipped where every test must run", red=True)
            terminalreporter.line(
                f"{len(self.skipped)} skipped under CI=true or BOOTRIG_REQUIRE_ALL=1, "
                "so the session fails:",
                red=True,
            )
            for line in self.skipped:
                terminalreporter.line(f"  {line}")


def pytest_configure(config: pytest.Config) -> None:
    if strict():
        config.pluginmanager.register(SkipGuard(), "bootrig-skipguard")
