"""A console pattern configured beside the ui_ready marker ends the cycle's wait like the
tag does: a `quiet` kernel keeps ui-ready's /dev/kmsg tag off the console."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.instruments.drivers import load_config
from rig.measure.cycle import _TagWatch, _ui_lines
from rig.model import Chunk
from tests.e2e import REPO

STOCK = REPO / "config" / "qemu-arm64-stock.toml"


def test_the_stock_config_names_a_stand_in_for_ui_ready() -> None:
    cfg = load_config(STOCK)
    end = cfg.stages[-1].end
    assert (end.kind, end.value, end.fallback) == ("marker", "ui_ready", "^Application ready")
    assert [p.pattern for p in _ui_lines(cfg)] == ["^Application ready"]
    # The hooked target's too: with `quiet` on its command line (rig cost's off variant,
    # docs/cost.md) the tag is off the console and the init script's line ends the wait.
    hooked = [p.pattern for p in _ui_lines(load_config(REPO / "config" / "qemu-arm64.toml"))]
    assert hooked == ["^Application ready"]


def test_the_pattern_is_found_across_chunks_and_is_not_a_panic() -> None:
    watch = _TagWatch((re.compile("^Application ready"),))
    watch(Chunk(0, b"Starting application\r\nApplication re"))
    assert not watch.seen.is_set()
    watch(Chunk(1, b"ady\r\n"))
    assert watch.seen.is_set() and not watch.panic


def test_without_a_pattern_only_the_tag_ends_the_wait() -> None:
    watch = _TagWatch()
    watch(Chunk(0, b"Application ready\r\n"))
    assert not watch.seen.is_set()
    watch(Chunk(1, b"[    1.0] bootrig: marker ui_"))
    watch(Chunk(2, b"ready\r\n"))
    assert watch.seen.is_set() and not watch.panic


@pytest.mark.parametrize(
    ("end", "error"),
    [
        ('{ marker = "ui_ready", console = "(" }', "a regular expression"),
        ('{ marker = "nope", console = "x" }', "one of bootm"),
        ('{ console = "x", power = true }', "exactly one of"),
    ],
)
def test_a_bad_stand_in_is_refused(tmp_path: Path, end: str, error: str) -> None:
    text = STOCK.read_text().replace(
        'end = { marker = "ui_ready", console = "^Application ready" }', f"end = {end}"
    )
    cfg = tmp_path / "c.toml"
    cfg.write_text(text.replace('"../', f'"{REPO}/'))
    with pytest.raises(ConfigError, match=error):
        load_config(cfg)
