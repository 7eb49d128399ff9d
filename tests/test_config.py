from __future__ import annotations

import re
from pathlib import Path

import pytest

from rig.config.stages import DEFAULT_STAGES
from rig.errors import ConfigError
from rig.instruments.drivers import driver_specs, load_config

MINIMAL = """
[power]
port = "/dev/ttyUSB1"
[console]
port = "/dev/ttyUSB0"
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "rig.toml"
    p.write_text(text)
    return p


def test_default_config_loads(repo: Path) -> None:
    cfg = load_config(repo / "config" / "rig.toml")
    assert cfg.sim is not None and cfg.sim.profile.name == "ecovec-optimised.toml"
    assert cfg.analyzer.channels["power"] == "D0"
    assert [s.name for s in cfg.stages] == [s.name for s in DEFAULT_STAGES]
    assert cfg.board == "ecovec" and cfg.variant == "optimised"


def test_board_override_names_board(repo: Path) -> None:
    cfg = load_config(repo / "config" / "rig.toml", board=repo / "config/boards/fast.toml")
    assert cfg.sim is not None and cfg.sim.profile.name == "fast.toml"
    assert cfg.variant != "optimised"


def test_minimal_hardware_config(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, MINIMAL))
    assert cfg.sim is None and driver_specs(cfg).analyzer.name == "none"
    assert cfg.stages == DEFAULT_STAGES


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("[console]\nport = 3\n", None),  # duplicate table: TOML error names the file
        (
            '[timeouts]\nboot_s = "long"\n',
            "key 'timeouts.boot_s': expected a finite number from 0.001 to 604800, found str",
        ),
        ("[timeouts]\nboot_s = nan\n", "key 'timeouts.boot_s': expected a finite number"),
        ("[timeouts]\npost_ui_s = inf\n", "key 'timeouts.post_ui_s': expected a finite"),
        ("[timeouts]\nboot_s = 1e300\n", "key 'timeouts.boot_s': expected a number from"),
        ("[analyzer]\ndebounce_us = -inf\n", "key 'analyzer.debounce_us': expected a finite"),
        ("[console]\nbaud = 0\n", None),  # duplicate [console]: still names the file
        ("[timeouts]\nbot_s = 3\n", "unknown key 'timeouts.bot_s'"),
        (
            '[analyzer]\ndriver = "saleae"\n',
            "key 'analyzer.driver': expected 'none' or 'sigrok' or 'sim' or 'labgrid' or 'qemu'",
        ),
        (
            '[analyzer]\ndriver = "sim"\n[analyzer.channels]\npower = "D9"\n',
            "key 'analyzer.channels.power': expected a device channel D0..D7",
        ),
        ('[analyzer]\ndriver = "sigrok"\n', "missing key 'analyzer.device'"),
        (
            '[analyzer]\ndriver = "sigrok"\ndevice = "demo"\n[analyzer.options]\nx = [1]\n',
            "key 'analyzer.options.x': expected a string or a number",
        ),
        ('[analyzer.channels]\npower = "D0"\nbootm = "D0"\n', "key 'analyzer.channels.bootm'"),
        ('[analyzer.channels]\nbootm = "D1"\n', "missing key 'analyzer.channels.power'"),
        ('[analyzer.channels]\npower = "D0"\nvsync = "D1"\n', "expected a channel name"),
        ('[[stages]]\nname = "x"\nend = { marker = "nope" }\n', "key 'stages[0].end.marker'"),
        ('[[stages]]\nname = "x"\nend = { console = "(" }\n', "expected a regular expression"),
        ('[[stages]]\nname = "x"\n', "missing key 'stages[0].end'"),
        ("[power]\n", None),
    ],
)
def test_errors_name_file_and_key(tmp_path: Path, extra: str, needle: str | None) -> None:
    path = write(tmp_path, MINIMAL + extra)
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert str(path) in str(e.value)
    if needle:
        assert needle in str(e.value)


def test_nan_off_hold_and_a_huge_baud_are_refused(tmp_path: Path) -> None:
    text = MINIMAL.replace("[power]\n", "[power]\noff_hold_s = nan\n", 1)
    with pytest.raises(ConfigError, match=r"key 'power.off_hold_s': expected a finite number"):
        load_config(write(tmp_path, text))
    text = MINIMAL.replace("[console]\n", "[console]\nbaud = 10000000000\n", 1)
    with pytest.raises(ConfigError, match=r"key 'console.baud': expected an integer from 1"):
        load_config(write(tmp_path, text))


def test_a_config_that_is_not_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "rig.toml"
    path.write_bytes(MINIMAL.encode() + b"# caf\xe9\n")
    with pytest.raises(
        ConfigError, match=rf"{path}: not UTF-8 text \(byte offset {len(MINIMAL) + 5}\)"
    ):
        load_config(path)
    with pytest.raises(ConfigError, match=r"cannot read the config"):
        load_config(tmp_path)  # a folder


def test_missing_power_table(tmp_path: Path) -> None:
    path = write(tmp_path, '[console]\nport = "x"\n')
    with pytest.raises(ConfigError, match="missing key 'power'"):
        load_config(path)


def test_sim_port_needs_sim(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL.replace('"/dev/ttyUSB1"', '"sim"'))
    with pytest.raises(ConfigError, match=r"key 'power\.port'"):
        load_config(path)


def test_missing_profile(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + '[sim]\nprofile = "nowhere.toml"\n')
    with pytest.raises(ConfigError, match=r"sim\.profile"):
        load_config(path)


def test_secrets_redacted(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, MINIMAL + '[rig]\nname = "a"\n'))
    raw = dict(cfg.raw)
    raw["influx"] = {"password": "hunter2", "url": "http://127.0.0.1:8086"}
    object.__setattr__(cfg, "raw", raw)
    snap = cfg.snapshot()
    assert snap["influx"]["password"] == "***"
    assert snap["influx"]["url"].startswith("http")


def test_command_line_overrides(tmp_path: Path, repo: Path) -> None:
    cfg = load_config(
        repo / "config" / "qemu-arm64.toml",
        overrides=['qemu.kernel_args="initcall_debug loglevel=8"', "timeouts.boot_s=12.5"],
    )
    qemu = driver_specs(cfg).qemu
    assert qemu is not None and qemu.kernel_args == "initcall_debug loglevel=8"
    assert cfg.boot_timeout_s == 12.5
    assert cfg.snapshot()["qemu"]["kernel_args"] == "initcall_debug loglevel=8"
    path = write(tmp_path, MINIMAL)
    for bad, message in (
        ("timeouts.boot_s", "expected KEY=VALUE"),
        ("console.baud=fast", "'fast' is not a TOML value"),
        ("console.port.x=1", "'console.port' is not a table"),
        ("console.baud=-3", "key 'console.baud': expected an integer from 1 to 100000000"),
        ("consol.baud=3", "unknown key 'consol'"),
        ("power.channel=95", "key 'power.channel': expected a relay channel 1..94"),
        ('power.driver="usbrelay"', "or 'qemu', found str 'usbrelay'"),
    ):
        with pytest.raises(ConfigError, match=re.escape(message)):
            load_config(path, overrides=[bad])


def test_sigrok_channels_are_the_devices_own_names(tmp_path: Path) -> None:
    """DSLogic and Logic16 name their channels 0..15: the config takes them as they are."""
    text = MINIMAL + (
        '[analyzer]\ndriver = "sigrok"\ndevice = "dreamsourcelab-dslogic"\n'
        'trigger = "0=r"\n[analyzer.options]\nvoltage_threshold = "1.2-1.2"\n'
        '[analyzer.channels]\npower = "0"\nbootm = "1"\nuart_tx = "15"\n'
    )
    cfg = load_config(write(tmp_path, text))
    assert cfg.analyzer.channels == {"power": "0", "bootm": "1", "uart_tx": "15"}
    s = driver_specs(cfg).analyzer.settings
    assert s.options == {"voltage_threshold": "1.2-1.2"} and s.trigger == "0=r"


def test_analysis_options_are_a_config_table(tmp_path: Path) -> None:
    """[analysis] is read at load, checked with file and key, and kept in the snapshot
    that every analysis of the run reads."""
    text = MINIMAL + '[analysis]\ntop_n = 3\n[[analysis.app_events]]\nname = "ui"\nregex = "x"\n'
    cfg = load_config(write(tmp_path, text))
    assert cfg.analysis.top_n == 3 and cfg.analysis.app_events[0].name == "ui"
    assert cfg.snapshot()["analysis"]["top_n"] == 3
    for bad, needle in [
        ("top_n = 0", "key 'analysis.top_n': expected an integer >= 1"),
        ("min_gain_ms = nan", "key 'analysis.min_gain_ms': expected a finite number"),
        ("top = 3", "unknown key 'analysis.top'"),
        ('app_events = [{name = "a", regex = "("}]', "key 'analysis.app_events': app event 'a'"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(needle)) as e:
            load_config(write(tmp_path, MINIMAL + f"[analysis]\n{bad}\n"))
        assert str(tmp_path / "rig.toml") in str(e.value)
