"""config/budgets.toml through its one parser (rig.config.budgets): the shipped file, the rule
by which a variant changes its board's budgets, errors that name file and key, no file
meaning no budgets, and the same budgets reaching Robot, `rig soak` and the dashboards."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from rig.config.budgets import read_budgets, read_budgets_if_any
from rig.errors import ConfigError
from rig.instruments.drivers import load_config
from rig.model.budgets import NO_BUDGETS
from rig.robot.library import BootRig
from rig.sinks.grafana.generate import render
from rig.sinks.grafana.query import panels
from rig.soak.budgets import soak_budgets, verdicts
from tests.e2e import make_config

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "config" / "budgets.toml"
STAGES = ("bootloader", "kernel", "rootfs_mount", "init", "application")


def test_shipped_file_has_every_board_and_the_baseline_variant() -> None:
    f = read_budgets(SHIPPED)
    assert list(f.boards) == ["fastboard", "ecovec", "qemu-arm64", "qemu-armv7"]
    fast = f.budgets("fastboard", "test", STAGES)
    assert fast.power_to_ui_s == 0.40 and fast.stages["kernel"] == 0.15
    assert fast.percentiles == {95.0: {"power_to_ui_s": 0.36, "kernel": 0.14, "init": 0.055}}
    base = f.budgets("ecovec", "baseline", STAGES)
    opt = f.budgets("ecovec", "optimised", STAGES)
    assert base.power_to_ui_s == 20.5 and opt.power_to_ui_s == 1.0
    assert base.stages["kernel"] == 1.4 and opt.stages["kernel"] == 0.13
    assert base.percentile(95) == {"power_to_ui_s": 20.2, "kernel": 1.4}
    assert opt.energy["kernel"] == 0.35 and set(opt.energy) == set(opt.stages)
    assert base.own_variant and not opt.own_variant
    assert base.where() == f"{SHIPPED} [boards.ecovec] and [boards.ecovec.variants.baseline]"


RULE = """
schema = "bootrig.budgets/1"
[boards.b]
power_to_ui_s = 1.0
[boards.b.stages]
kernel = 0.2
init = 0.3
[boards.b.percentiles.95]
power_to_ui_s = 0.9
kernel = 0.19
[boards.b.energy]
kernel = 0.5
[boards.b.variants.slow]
power_to_ui_s = 20.5
[boards.b.variants.slow.stages]
kernel = 1.4
[boards.b.variants.slow.percentiles.95]
kernel = 1.3
[boards.b.variants.slow.percentiles.99]
power_to_ui_s = 20.4
[boards.b.variants.slow.energy]
init = 2
"""


def test_a_variant_changes_its_boards_budgets_key_by_key(tmp_path: Path) -> None:
    path = tmp_path / "budgets.toml"
    path.write_text(RULE)
    f = read_budgets(path)
    slow = f.budgets("b", "slow", ("kernel", "init"))
    assert slow.power_to_ui_s == 20.5
    assert slow.stages == {"kernel": 1.4, "init": 0.3}  # init: the board's
    assert slow.percentiles == {
        95.0: {"power_to_ui_s": 0.9, "kernel": 1.3},  # per percentile and key
        99.0: {"power_to_ui_s": 20.4},  # only the variant has it
    }
    assert slow.energy == {"kernel": 0.5, "init": 2.0}
    # a variant the file does not name, or none: the board's own
    for other in ("fast", None):
        b = f.budgets("b", other)
        assert b.power_to_ui_s == 1.0 and b.stages == {"kernel": 0.2, "init": 0.3}
        assert b.percentiles == {95.0: {"power_to_ui_s": 0.9, "kernel": 0.19}}
        assert not b.own_variant


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[boards.b]\npower_to_ui_s = -1\n", "'boards.b.power_to_ui_s': expected a number >= 0"),
        ("[boards.b.stages]\nkernal = 1\n", "key 'boards.b.stages.kernal': not a stage (kernel)"),
        ("[boards.b.stages]\npower_to_ui_s = 1\n", "key 'boards.b.stages.power_to_ui_s': not a"),
        ("[boards.b.percentiles.101]\nkernel = 1\n", "key 'boards.b.percentiles.101': expected"),
        ("[boards.b.percentiles.95]\nkernel = 1\n[boards.b.percentiles.'95.0']\nkernel = 2\n",
         "key 'boards.b.percentiles.95.0': the same percentile as 'boards.b.percentiles.95'"),
        ("[boards.b]\npower_to_ui = 1\n", "unknown key 'boards.b.power_to_ui'"),
        ("[boards.other]\npower_to_ui_s = 1\n", "no budgets for board 'b' (boards here: other)"),
        ("[boards.b.energy]\nkernal = 1\n", "key 'boards.b.energy.kernal': not a stage"),
        ("[boards.b.energy]\nkernel = 0\n", "key 'boards.b.energy.kernel': expected joules > 0"),
        ("[boards.b.variants.v]\npower_to_ui_s = 'x'\n",
         "key 'boards.b.variants.v.power_to_ui_s': expected a finite number"),
        ("[boards.b.variants.v.percentiles.95]\nkernal = 1\n",
         "key 'boards.b.variants.v.percentiles.95.kernal': not a stage (kernel)"),
        ("[boards.b.variants.v.variants.w]\npower_to_ui_s = 1\n",
         "unknown key 'boards.b.variants.v.variants'"),
        ("[boards.b]\nvariants = 3\n", "key 'boards.b.variants': expected a table"),
        # another board's mistake is found too: the whole file is checked
        ("[boards.b]\npower_to_ui_s = 1\n[boards.c]\npower_to_ui_s = 0\n",
         "key 'boards.c.power_to_ui_s': expected seconds > 0"),
        ('schema = "bootrig.budgets/2"\n', "key 'schema': expected 'bootrig.budgets/1'"),
        ("[boards.b\n", "not valid TOML"),
    ],
)  # fmt: skip
def test_errors_name_the_file_and_the_key(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "budgets.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"budgets\.toml") as e:
        read_budgets(path).budgets("b", "v", ("kernel",))
    assert needle in str(e.value)
    assert str(e.value).startswith(f"{path}: ")


def test_no_file_means_no_budgets(tmp_path: Path) -> None:
    missing = tmp_path / "budgets.toml"
    assert read_budgets_if_any(missing) == NO_BUDGETS and not NO_BUDGETS.boards
    with pytest.raises(ConfigError, match="no budgets file: no budgets for board 'b'"):
        NO_BUDGETS.budgets("b", None)
    with pytest.raises(ConfigError, match=r"budgets\.toml: no such budgets file"):
        read_budgets(missing)  # a file the user named must be there


def test_the_duplicate_parsers_are_gone() -> None:
    for old in ("rig.robot.budgets", "rig.sinks.grafana.budgets"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    # Nothing but rig/config/budgets.py reads the file's TOML.
    readers = [
        p.relative_to(REPO).as_posix()
        for p in (REPO / "rig").rglob("*.py")
        if "budget" in p.name and re.search(r"tomllib|load_toml", p.read_text())
    ]
    assert readers == ["rig/config/budgets.py"]
    assert "DEFAULT_BUDGETS" not in "".join(p.read_text() for p in (REPO / "rig").rglob("*.py"))


def test_a_variant_budget_reaches_robot_soak_and_dashboard_identically(tmp_path: Path) -> None:
    """One file, read by the three consumers for the Ecovec's baseline variant (config
    next to it, as Robot and `rig soak` find it by default): the same budgets."""
    budgets = tmp_path / "budgets.toml"
    budgets.write_text(RULE.replace("boards.b", "boards.ecovec").replace("slow", "baseline"))
    config = make_config(tmp_path, board="ecovec-baseline.toml")
    cfg = load_config(config)
    assert (cfg.board, cfg.variant) == ("ecovec", "baseline")

    robot = BootRig(config=str(config), deliver=False).load_budgets(str(budgets))
    soak = soak_budgets(cfg)  # rig soak: budgets.toml beside the config
    assert soak is not None
    checked = verdicts(soak, {"power_to_ui": [19.4], "kernel": [1.2]}).checks
    trend = next(
        p
        for d in render(budgets).values()
        for p in panels(json.loads(d))
        if p["title"] == "Power-to-UI per boot, with budgets"
    )
    drawn = {
        t["alias"]: float(m[1])
        for t in trend["targets"]
        if (m := re.search(r"\* 0 \+ (\S+) AS \"budget\"", t["query"]))
    }

    assert robot["power_to_ui_s"] == drawn["budget ecovec baseline"] == 20.5
    assert drawn["budget ecovec"] == 1.0  # the board's other variants
    assert robot["percentiles"] == {95.0: {"power_to_ui_s": 0.9, "kernel": 1.3},
                                    99.0: {"power_to_ui_s": 20.4}}  # fmt: skip
    key = {"power_to_ui": "power_to_ui_s"}
    assert {(c.percentile, key.get(c.what, c.what), c.budget_s) for c in checked} == {
        (q, k, v) for q, t in robot["percentiles"].items() for k, v in t.items()
    }
    assert robot["stages"] == {**soak.stages} == {"kernel": 1.4, "init": 0.3}
    assert robot["energy"] == {**soak.energy}
