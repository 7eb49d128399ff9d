"""A rig config names its board's budgets file (`[board] budgets`): the README's
`robot --variable CONFIG:my-rig.toml testsuites/boot_budget.robot` then checks a board
config/budgets.toml does not have, as `rig soak` does; without it the suite's failure
names the board, the file and the ways to fix it. Run by the real `robot`."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from robot.api import ExecutionResult
from robot.run import run as robot_run

from rig.errors import ConfigError
from rig.instruments.drivers import load_config
from rig.soak.budgets import soak_budgets
from tests.e2e import REPO, make_config

MY_BUDGETS = """
schema = "bootrig.budgets/1"
[boards.myboard]
power_to_ui_s = 0.5
[boards.myboard.stages]
kernel = 0.2
[boards.myboard.percentiles.95]
kernel = 0.19
"""
#: One test of the suite that needs no boot: the suite setup (Load Budgets) runs first.
NO_BOOT = "A Misspelt Stage Is An Error, Not A Pass"


def _my_rig(tmp_path: Path, budgets_key: bool) -> Path:
    """A rig whose board, "myboard", is not in config/budgets.toml."""
    (tmp_path / "my-budgets.toml").write_text(MY_BUDGETS)
    key = 'budgets = "my-budgets.toml"\n' if budgets_key else ""
    return make_config(tmp_path, extra=f'\n[board]\nname = "myboard"\n{key}', name="my-rig.toml")


def _boot_budget_suite(tmp_path: Path, *variables: str) -> tuple[str, str]:
    out = tmp_path / "out"
    robot_run(
        str(REPO / "testsuites" / "boot_budget.robot"),
        test=[NO_BOOT],
        variable=list(variables),
        outputdir=str(out),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    (test,) = ExecutionResult(str(out / "output.xml")).suite.all_tests
    return test.status, test.message


def test_the_suite_takes_the_budgets_file_the_rig_config_names(tmp_path: Path) -> None:
    config = _my_rig(tmp_path, budgets_key=True)
    assert _boot_budget_suite(tmp_path, f"CONFIG:{config}") == ("PASS", "")


def test_budgets_given_on_the_command_line_win(tmp_path: Path) -> None:
    config = _my_rig(tmp_path, budgets_key=False)
    budgets = tmp_path / "my-budgets.toml"
    assert _boot_budget_suite(tmp_path, f"CONFIG:{config}", f"BUDGETS:{budgets}") == ("PASS", "")


def test_a_board_missing_from_the_budgets_file_says_how_to_fix_it(tmp_path: Path) -> None:
    config = _my_rig(tmp_path, budgets_key=False)
    status, message = _boot_budget_suite(tmp_path, f"CONFIG:{config}")
    assert status == "FAIL"
    assert f"{REPO / 'config' / 'budgets.toml'}: no budgets for board 'myboard'" in message
    assert 'budgets = "FILE" in the rig config\'s [board] table' in message
    assert "--variable BUDGETS:FILE" in message and "[boards.myboard]" in message


def test_rig_soak_judges_by_the_configs_budgets_file(tmp_path: Path) -> None:
    cfg = load_config(_my_rig(tmp_path, budgets_key=True))
    assert cfg.budgets == (tmp_path / "my-budgets.toml").resolve()
    budgets = soak_budgets(cfg)
    assert budgets is not None and budgets.board == "myboard"
    assert budgets.percentile(95) == {"kernel": 0.19}
    # Named by the config, the file must have the board: no silent "no budgets".
    other = tmp_path / "other"
    other.mkdir()
    (other / "my-budgets.toml").write_text(MY_BUDGETS.replace("myboard", "otherboard"))
    cfg = load_config(
        make_config(other, extra='\n[board]\nname = "myboard"\nbudgets = "my-budgets.toml"\n')
    )
    with pytest.raises(
        ConfigError, match=r"no budgets for board 'myboard' \(boards here: otherboard\)"
    ):
        soak_budgets(cfg)


def test_a_budgets_file_that_does_not_exist_is_a_config_error(tmp_path: Path) -> None:
    config = make_config(tmp_path, extra='\n[board]\nname = "myboard"\nbudgets = "nope.toml"\n')
    with pytest.raises(
        ConfigError, match=r"key 'board.budgets': no such budgets file .*nope\.toml"
    ):
        load_config(config)
