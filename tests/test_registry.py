"""The driver registry: a new driver is one class, and the config learns it from there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from rig.config.tomlcheck import Table
from rig.errors import ConfigError
from rig.instruments.drivers import load_config
from rig.instruments.registry import POWER, BenchContext, Registry


def test_every_shipped_driver_is_registered() -> None:
    import rig.instruments.drivers  # noqa: F401

    assert {"ch340", "qemu"} <= set(POWER.names())


def test_a_new_driver_parses_its_own_table(tmp_path: Path) -> None:
    reg = Registry("power")

    @dataclass(frozen=True)
    class Settings:
        outlet: int

    @reg.register("pdu")
    class Pdu:
        @classmethod
        def parse(cls, t: Table, base: Path) -> Settings:
            return Settings(t.int("outlet", min=1))

        @classmethod
        def build(cls, s: Settings, bench: BenchContext) -> str:
            return f"outlet {s.outlet}"

    good = Table(tmp_path / "rig.toml", {"driver": "pdu", "outlet": 3}, "power")
    spec = reg.parse(good, tmp_path, "pdu")
    good.done()
    assert spec.settings == Settings(3)
    bad = Table(tmp_path / "rig.toml", {"driver": "pdu", "outlet": 0}, "power")
    with pytest.raises(ConfigError, match=r"key 'power.outlet': expected an integer >= 1"):
        reg.parse(bad, tmp_path, "pdu")
    with pytest.raises(ValueError, match="registered twice"):
        reg.register("pdu")(Pdu)


def test_unknown_keys_of_a_driver_are_rejected(tmp_path: Path) -> None:
    cfg = tmp_path / "rig.toml"
    cfg.write_text(
        '[power]\ndriver = "qemu"\nport = "/dev/ttyUSB1"\n[console]\nport = "qemu"\n[qemu]\n'
    )
    with pytest.raises(ConfigError, match=r"unknown key 'power.port'"):
        load_config(cfg)
