"""Hostile TOML (a rig config, a board profile, budgets, a --set value) through the real
`rig`: deep nesting (RecursionError in tomllib, exit 3), integers of thousands of digits
(ValueError, exit 3), a dotted key of 100,000 parts (tomllib takes quadratic time and
memory: the OOM killer ended it), /dev/zero as the config (read until memory ran out).
Each is exit 2 naming the file, in seconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rig.untrusted import MAX_TOML_BYTES, MAX_TOML_DEPTH
from tests.e2e import make_config
from tests.test_errors_cli import no_traceback, rig
from tests.test_untrusted_json import fails_with

HOSTILE = {
    "recursion": ("x = " + "[" * 50_000 + "]" * 50_000, f"nested deeper than {MAX_TOML_DEPTH}"),
    "inline tables": (
        "x = " + "{a = " * 40 + "1" + "}" * 40,
        f"nested deeper than {MAX_TOML_DEPTH}",
    ),
    "5000 digits": ("x = 1" + "0" * 5000, "Exceeds the limit (4300 digits)"),
    "long dotted key": (".".join(["a"] * 100_000) + " = 1", "a dotted key of more than 32 parts"),
    "long table header": ("[" + ".".join(['"a"'] * 100_000) + "]", "a dotted key of more than"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_config(case: str, tmp_path: Path) -> None:
    text, why = HOSTILE[case]
    config = make_config(tmp_path)
    config.write_text(text + "\n" + config.read_text())
    fails_with(rig("run", "--config", str(config), "--json"), config, why, "config")


def test_board_profile(tmp_path: Path) -> None:
    text, why = HOSTILE["recursion"]
    board = tmp_path / "board.toml"
    board.write_text(text + "\n")
    p = rig("run", "--config", str(make_config(tmp_path)), "--board", str(board), "--json")
    fails_with(p, board, why, "config")


def test_budgets(tmp_path: Path) -> None:
    text, why = HOSTILE["5000 digits"]
    budgets = tmp_path / "budgets.toml"
    budgets.write_text(text + "\n")
    p = rig("grafana", "build", "--budgets", str(budgets), "--dashboards", str(tmp_path), "--json")
    fails_with(p, budgets, why, "config")


def test_a_set_value(tmp_path: Path) -> None:
    deep = "[" * 5_000 + "]" * 5_000
    p = rig("run", "--config", str(make_config(tmp_path)), "--set", f"timeouts.boot_s={deep}")
    no_traceback(p)
    assert p.returncode == 2 and f"nested deeper than {MAX_TOML_DEPTH}" in p.stderr, p.stderr


def test_dev_zero_as_the_config() -> None:
    p = rig("run", "--config", "/dev/zero", "--json")
    fails_with(p, Path("/dev/zero"), f"more than {MAX_TOML_BYTES} bytes", "config")


def test_a_config_of_megabytes(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    config.write_text(config.read_text() + ("# padding\n" * (MAX_TOML_BYTES // 10 + 1)))
    p = rig("run", "--config", str(config), "--json")
    fails_with(p, config, "bytes; not a config", "config")


def test_a_string_with_many_dots_is_no_dotted_key(tmp_path: Path) -> None:
    """What the dotted-key check must not take for a key: dots in strings and comments.
    `rig prune` reads the whole config and its results_dir, and starts no board."""
    config = make_config(tmp_path)
    dots = ".".join(["a"] * 100)
    text = config.read_text().replace('name = "sim-rig"', f'name = "{dots}"  # {dots}', 1)
    config.write_text(text)
    (tmp_path / "results").mkdir(exist_ok=True)
    p = rig("prune", "--config", str(config), "--dry-run", "--json")
    assert "not a results folder" in json.loads(p.stdout)["error"]  # the config was read
