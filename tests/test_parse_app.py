from __future__ import annotations

import pytest

from rig.analysis.parsers.app import find_app_events
from rig.model.options import compile_patterns
from tests.test_parse_replay import load


def test_named_events_with_groups() -> None:
    pats = compile_patterns(
        [
            {"name": "first_frame", "regex": r"first frame after (?P<ms>\d+) ms"},
            {"name": "weston", "regex": r"Started weston\.service"},
            {"name": "never", "regex": "no such line"},
        ]
    )
    events = find_app_events(load("imx8mm-2023.04-6.1-systemd").lines, pats)
    assert [(e.name, e.groups) for e in events] == [("weston", {}), ("first_frame", {"ms": "412"})]


def test_pattern_sees_the_printk_prefix_like_stage_patterns() -> None:
    pats = compile_patterns([{"name": "ui", "regex": r"^\[\s*\d+\.\d+\] bootrig: marker ui_ready"}])
    (ev,) = find_app_events(load("ecovec-2009.01-2.6.31").lines, pats)
    assert ev.name == "ui"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"name": "bad", "regex": "(unclosed"}, "app event 'bad': invalid regex"),
        ({"regex": "x"}, "expected keys 'name' and 'regex'"),
    ],
)
def test_bad_patterns_are_named_errors(spec: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        compile_patterns([spec])


def test_no_patterns_no_events() -> None:
    assert find_app_events(load("ecovec-2009.01-2.6.31").lines, []) == []
