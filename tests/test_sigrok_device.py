"""Any sigrok device, through the real sigrok-cli and its `demo` driver: channel names and
count from the device, 1 or 2 bytes per raw sample, sample rates checked, power on only
once the device streams, a full cycle with config/examples/sigrok-demo.toml."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rig.artifacts.srzip import convert_binary
from rig.errors import ConfigError, InstrumentError
from rig.instruments.analyzer_sigrok import SigrokAnalyzer
from rig.instruments.sigrok_probe import parse_show, probe
from tests.captures import read_sr
from tests.e2e import REPO

FX2_SHOW = """\
Driver functions:
    Logic analyzer
fx2lafw:conn=1.7 - Saleae Logic with 8 channels: D0 D1 D2 D3 D4 D5 D6 D7
Channel groups:
    Logic: channels D0 D1 D2 D3 D4 D5 D6 D7
Supported configuration options:
    Supported triggers: 0 1 r f e
    samplerate - supported samplerates:
      20 kHz
      25 kHz
      1 MHz
      24 MHz (current)
    continuous: on, off
"""


def test_channel_names_and_bytes_per_sample_come_from_the_device() -> None:
    eight, sixteen, four = (probe(f"demo:logic_channels={n}") for n in (8, 16, 4))
    assert eight.logic_channels == tuple(f"D{i}" for i in range(8)) and eight.unitsize == 1
    assert len(sixteen.logic_channels) == 16 and sixteen.unitsize == 2
    assert four.logic_channels == ("D0", "D1", "D2", "D3")
    fx2 = parse_show(FX2_SHOW, "fx2lafw")
    assert fx2.rates == (20_000, 25_000, 1_000_000, 24_000_000) and fx2.triggers == "0 1 r f e"
    assert fx2.rate_problem(24_000_000) is None
    assert "cannot sample at 5000000000 Hz" in (fx2.rate_problem(5_000_000_000) or "")


def test_config_errors_found_by_asking_the_device() -> None:
    with pytest.raises(
        ConfigError,
        match=r"analyzer.channels.power = 'D4': demo has no such logic channel "
        r"\(it has D0, D1, D2, D3\); demo takes its channel count in the device string: "
        r'device = "demo:logic_channels=5"',
    ):
        SigrokAnalyzer("demo:logic_channels=4", 1_000_000, {"power": "D4"})
    # A scan option given as a device option: sigrok-cli would refuse it at the capture.
    with pytest.raises(
        ConfigError,
        match=r"analyzer.options.logic_channels = 16: logic_channels is a scan option of "
        r'demo, not a device option: put scan options in the device string: device = "demo:'
        r'logic_channels=16"',
    ):
        SigrokAnalyzer("demo", 1_000_000, {"power": "D0"}, options={"logic_channels": "16"})
    with pytest.raises(
        ConfigError, match=r"analyzer\.samplerate = 5000000000: demo cannot sample at 5000000000 Hz"
    ):
        SigrokAnalyzer("demo", 5_000_000_000, {"power": "D0"})
    with pytest.raises(InstrumentError, match=r"no device found|nosuchdriver"):
        SigrokAnalyzer("nosuchdriver", 1_000_000, {"power": "D0"})


def test_an_option_sigrok_cli_refuses_names_the_key(tmp_path: Path) -> None:
    a = SigrokAnalyzer("demo", 100_000, {"power": "D0"}, options={"no_such_option": "1"})
    try:
        with pytest.raises(
            InstrumentError,
            match=r"Unknown device option 'no_such_option'.*analyzer.options.no_such_option is "
            r"passed as sigrok-cli --config no_such_option=1.*scan options \(logic_channels, "
            r"analog_channels, limit_frames\) go in the device string",
        ):
            a.arm(tmp_path / "a.bin")
    finally:
        a.close()


def _demo_config(tmp_path: Path, device: str, extra: str, channels: str) -> Path:
    """config/examples/sigrok-demo.toml writing into tmp_path, with another device,
    more [analyzer] keys and another channel map."""
    text = (REPO / "config" / "examples" / "sigrok-demo.toml").read_text()
    text = text.replace('results_dir = "../../results"', f'results_dir = "{tmp_path / "results"}"')
    text = text.replace(
        'profile = "../boards/fast.toml"', f'profile = "{REPO / "config/boards/fast.toml"}"'
    )
    text = text.replace('device = "demo:logic_channels=16"', f"device = {json.dumps(device)}")
    text = text.replace('bootm = "D9"\nuart_tx = "D15"\n', channels)
    text = text.replace("[analyzer.channels]", f"{extra}\n[analyzer.channels]")
    cfg = tmp_path / "demo.toml"
    cfg.write_text(text)
    return cfg


@pytest.mark.parametrize(
    ("device", "extra", "channels", "message"),
    [
        # The 8-channel demo device against a map that wants D9 and D15.
        ("demo", "", 'bootm = "D9"\nuart_tx = "D15"\n',
         r"key 'analyzer.channels.bootm' = 'D9': demo has no such logic channel \(it has D0, "
         r'D1, D2, D3, D4, D5, D6, D7\); demo takes .* device = "demo:logic_channels=16"'),
        # The channel count given where sigrok-cli --config options go.
        ("demo", "[analyzer.options]\nlogic_channels = 16\n", 'bootm = "D1"\n',
         r"key 'analyzer.options.logic_channels' = 16: logic_channels is a scan option of "
         r'demo.* device = "demo:logic_channels=16"'),
    ],
    ids=["channel-the-device-lacks", "scan-option-as-device-option"],
)  # fmt: skip
def test_what_the_device_lacks_is_a_config_error(
    tmp_path: Path, device: str, extra: str, channels: str, message: str
) -> None:
    cfg = _demo_config(tmp_path, device, extra, channels)
    p = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(cfg)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2, p.stderr
    assert re.search(rf"^error: {re.escape(str(cfg))}: {message}", p.stderr, re.M), p.stderr


def test_two_byte_samples_are_repacked_bit_for_bit(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 1 << 16, 100_001, dtype=np.uint16)
    (tmp_path / "c.bin").write_bytes(raw.astype("<u2").tobytes() + b"\x01")  # cut mid-sample
    n = convert_binary(
        tmp_path / "c.bin", tmp_path / "c.sr", ["power", "bootm", "uart_tx"], 1000, 2, [0, 9, 15]
    )
    cap = read_sr(tmp_path / "c.sr")
    assert n == cap.samples == 100_001 and cap.channels == ("power", "bootm", "uart_tx")
    for k, b in enumerate((0, 9, 15)):
        assert np.array_equal((cap.data >> k) & 1, (raw >> b) & 1)


def test_power_waits_until_the_device_streams(tmp_path: Path) -> None:
    # A device that needs 1.5 s to start (firmware upload): the real sigrok-cli behind it.
    slow = tmp_path / "slow-sigrok-cli"
    slow.write_text('#!/bin/sh\nsleep 1.5\nexec sigrok-cli "$@"\n')
    slow.chmod(0o755)
    a = SigrokAnalyzer("demo", 100_000, {"power": "D0"}, sigrok_cli=str(slow), start_timeout_s=0.5)
    with pytest.raises(InstrumentError, match=r"did not start streaming within 0\.5 s"):
        a.arm(tmp_path / "a.bin")
    a.close()
    b = SigrokAnalyzer("demo", 100_000, {"power": "D0"}, sigrok_cli=str(slow), start_timeout_s=10)
    try:
        armed = b.arm(tmp_path / "b.bin")
        assert (tmp_path / "b.bin").stat().st_size > 0  # samples flow before power-on
        res = b.stop()
        assert res.samples > 0 and res.armed_ns == armed
    finally:
        b.close()


@pytest.mark.parametrize("early", [False, True], ids=["armed-after-hold", "arm-before-off"])
def test_full_cycle_with_the_demo_driver(tmp_path: Path, early: bool) -> None:
    text = (REPO / "config" / "examples" / "sigrok-demo.toml").read_text()
    if early:  # sigrok-cli runs through the off-hold (docs/cold-boot.md)
        text = text.replace("debounce_us = 1000\n", "debounce_us = 1000\narm_before_off = true\n")
    text = text.replace('results_dir = "../../results"', f'results_dir = "{tmp_path / "results"}"')
    text = text.replace(
        'profile = "../boards/fast.toml"', f'profile = "{REPO / "config/boards/fast.toml"}"'
    )
    cfg = tmp_path / "demo.toml"
    cfg.write_text(text)
    p = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(cfg), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = json.loads(p.stdout)
    folder = Path(out["folder"])
    run = json.loads((folder / "run.json").read_text())
    assert run["instruments"]["analyzer_device"]["unitsize"] == 2
    assert run["capture"]["raw_bits"] == [0, 9, 15]
    cap = read_sr(folder / "capture.sr")
    assert cap.channels == ("power", "bootm", "uart_tx") and cap.samplerate == 1_000_000
    # The capture spans the cycle: from arming to stop, at the device's rate.
    span_s = (run["analyzer_stopped_ns"] - run["analyzer_armed_ns"]) / 1e9
    assert 0.5 * span_s < cap.samples / 1e6 < 1.5 * span_s
    assert not (folder / "capture.bin").exists()
    armed_early = run["analyzer_armed_ns"] < run["power_off_ns"]
    assert armed_early is early
    if early:  # the samples cover the whole hold before the power-on command
        hold_s = (run["power_on_ns"] - run["analyzer_armed_ns"]) / 1e9
        assert hold_s >= 0.2 and cap.samples / 1e6 > hold_s
    # The demo pattern is not a boot: classified as the evidence says, never a crash.
    assert out["report"]["outcome"] and "Traceback" not in p.stderr
