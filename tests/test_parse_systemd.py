from __future__ import annotations

import pytest

from rig.analysis.lines import Line, split_lines
from rig.analysis.parsers.systemd import UnitStatus, parse_systemd, timespan_s
from rig.model import Chunk
from tests.test_parse_replay import load


def _lines(*texts: str) -> list[Line]:
    return split_lines([Chunk(0, "\r\n".join(texts).encode() + b"\r\n")])


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("345ms", 0.345),
        ("2.345s", 2.345),
        ("1min 2.345s", 62.345),
        ("1h 2min 3.5s", 3723.5),
        ("1d 2h", 93600.0),
        ("850us", 0.00085),
        ("12µs", 0.000012),
        ("3min", 180.0),
    ],
)
def test_timespans(text: str, seconds: float) -> None:
    assert timespan_s(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "parts", "total", "scope"),
    [
        (
            "Startup finished in 1.234s (kernel) + 2.345s (initrd) + 5.678s (userspace) = 9.257s.",
            {"kernel": 1.234, "initrd": 2.345, "userspace": 5.678},
            9.257,
            "system",
        ),
        (
            "systemd[1]: Startup finished in 2.301s (firmware) + 1.002s (loader) + 1min 2.345s "
            "(kernel) + 5.678s (userspace) = 1min 11.326s.",
            {"firmware": 2.301, "loader": 1.002, "kernel": 62.345, "userspace": 5.678},
            71.326,
            "system",
        ),
        (
            "[    2.851336][    T1] systemd[1]: Startup finished in 742ms (kernel) + 2.108s "
            "(userspace) = 2.851s.",
            {"kernel": 0.742, "userspace": 2.108},
            2.851,
            "system",
        ),
        ("systemd[431]: Startup finished in 85ms.", {"": 0.085}, 0.085, "user"),
    ],
)
def test_startup_finished(text: str, parts: dict[str, float], total: float, scope: str) -> None:
    st = parse_systemd(_lines(text)).startup
    assert st is not None
    assert dict(st.parts) == pytest.approx(parts)
    assert st.total_s == pytest.approx(total) and st.scope == scope


def test_system_startup_wins_over_a_user_manager() -> None:
    sd = parse_systemd(
        _lines(
            "systemd[1]: Startup finished in 1s (kernel) + 2s (userspace) = 3s.",
            "systemd[431]: Startup finished in 85ms.",
        )
    )
    assert sd.startup is not None and sd.startup.scope == "system"


def test_status_lines_with_colour_and_unit_ids() -> None:
    sd = parse_systemd(load("imx8mm-2023.04-6.1-systemd").lines)
    by_verb: dict[str, list[UnitStatus]] = {}
    for u in sd.units:
        by_verb.setdefault(u.verb, []).append(u)
    assert [u.unit for u in by_verb["Reached target"]] == [
        "Path Units",
        "Local File Systems",
        "System Initialization",
        "Basic System",
        "Graphical Interface",
    ]
    (failed,) = by_verb["Failed to start"]
    assert (failed.status, failed.unit_id) == ("FAILED", "systemd-timesyncd.service")
    weston = [u for u in sd.units if u.unit_id == "weston.service"]
    assert [(u.verb, u.status) for u in weston] == [("Starting", ""), ("Started", "OK")]
    assert sd.startup is not None and sd.startup.total_s == pytest.approx(2.851)


def test_old_description_only_forms_and_kmsg_copies() -> None:
    sd = parse_systemd(
        _lines(
            "[  OK  ] Started Journal Service.",
            "         Starting Load Kernel Modules...",
            "[  OK  ] Reached target Basic System.",
            "[    3.100000] systemd[1]: Started Journal Service.",
            "[ TIME ] Timed out waiting for device /dev/ttyGS0.",
            "systemd[1]: graphical.target reached after 5.123s in userspace.",
        )
    )
    assert [(u.status, u.verb, u.unit, u.unit_id) for u in sd.units] == [
        ("OK", "Started", "Journal Service", None),
        ("", "Starting", "Load Kernel Modules", None),
        ("OK", "Reached target", "Basic System", None),
        ("", "Started", "Journal Service", None),
    ]
    assert [(t.target, t.userspace_s) for t in sd.targets] == [("graphical.target", 5.123)]


def test_sysvinit_lines_are_not_systemd() -> None:
    sd = parse_systemd(load("ecovec-2009.01-2.6.31").lines)
    assert sd.units == () and sd.startup is None and sd.targets == ()
