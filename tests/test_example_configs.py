"""The rig configs the repository ships and the docs show load with the rig's own loader:
a newcomer copies them first, so a key that no longer exists must fail here, not on the
bench."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rig.instruments.drivers import driver_specs, load_config
from tests.e2e import REPO

CONFIGS = sorted(
    p.relative_to(REPO)
    for p in (*REPO.glob("config/*.toml"), *REPO.glob("config/*/*.toml"))
    if p.parent.name != "boards" and p.name != "budgets.toml"
)


@pytest.mark.parametrize("path", CONFIGS, ids=str)
def test_every_shipped_config_loads(path: Path) -> None:
    load_config(REPO / path)


def test_the_real_board_example_is_a_real_bench() -> None:
    cfg = load_config(REPO / "config" / "examples" / "real-board.toml")
    assert cfg.sim is None and cfg.qemu is None  # real ports only
    d = driver_specs(cfg)
    assert d.power.name == "ch340"
    assert cfg.console.port.startswith("/dev/") and d.console.name == "serial"
    assert d.analyzer.name == "sigrok" and d.analyzer.settings.device == "fx2lafw"


def test_every_key_of_the_real_board_example_is_explained() -> None:
    """Each `key = value` line carries a comment, or follows one (a comment block)."""
    lines = (REPO / "config" / "examples" / "real-board.toml").read_text().splitlines()
    bare = [
        f"{n}: {line}"
        for n, line in enumerate(lines, 1)
        if re.match(r"^[a-z_]+ = ", line)
        and "#" not in line
        and not lines[n - 2].lstrip().startswith("#")
        and not re.match(r"^(name|end) = ", line)  # a [[stages]] entry, explained above them
    ]
    assert not bare, "keys without a comment:\n" + "\n".join(bare)


def test_the_configs_in_real_board_md_load(tmp_path: Path) -> None:
    """The config of docs/real-board.md, section 5, and its `command` power table."""
    doc = (REPO / "docs" / "real-board.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", doc, re.S)
    bench = next(b for b in blocks if b.startswith("# config/bench-myboard.toml"))
    (tmp_path / "bench.toml").write_text(bench)
    assert driver_specs(load_config(tmp_path / "bench.toml")).power.name == "ch340"
    command = next(b for b in blocks if 'driver = "command"' in b)
    power = re.search(r"^\[power\]\n.*?(?=^\[|\Z)", bench, re.S | re.M)
    assert power is not None
    (tmp_path / "command.toml").write_text(bench.replace(power.group(0), command + "\n"))
    power = driver_specs(load_config(tmp_path / "command.toml")).power
    assert power.name == "command" and power.settings.on[0] != ""
