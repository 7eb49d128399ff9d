"""The decoder under sigrok bug #1671, and how `scan_markers` reports failures."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rig.artifacts.decode import find_decoders, scan_markers
from rig.artifacts.srzip import write_sr
from rig.errors import ArtifactError, ConfigError, RigError

ALL = ["power", "bootm", "do_mount_root", "kernel_init", "ui_ready"]


def capture(path: Path, channels: list[str]) -> Path:
    data = np.zeros(10_000, np.uint8)
    data[1_000:] = 0xFF  # every channel rises at 1000 (power) or toggles there (markers)
    write_sr(path, channels, 1_000_000, [data])
    return path


@pytest.mark.parametrize("channels", [ALL, ["power", "ui_ready"], ["power"]])
def test_has_channel_workaround_exits_cleanly(tmp_path: Path, channels: list[str]) -> None:
    # Each decoder start calls has_channel() four times. Without the workaround, 400
    # instances in one process take True/False to refcount zero and abort at exit (checked
    # by hand with the workaround removed); PulseView gets there by re-decoding.
    cap = capture(tmp_path / "c.sr", channels)
    pd = ":".join(["bootmarkers", *(f"{c}={c}" for c in channels)])
    cmd = ["sigrok-cli", "-i", str(cap), "--protocol-decoder-samplenum"]
    cmd += ["-P", pd] * 400
    env = {**os.environ, "SIGROKDECODE_DIR": str(find_decoders()[0])}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr == ""
    assert proc.stdout.count(": power-up") == 400


def test_missing_sigrok_cli(tmp_path: Path) -> None:
    cap = capture(tmp_path / "c.sr", ["power"])
    with pytest.raises(RigError, match=r"c\.sr.*no-such-sigrok-cli -i .*could not start"):
        scan_markers(cap, sigrok_cli=str(tmp_path / "no-such-sigrok-cli"))


def test_decoder_exception_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # sigrok-cli exits 0 when a decoder raises; the runner must still fail loudly.
    broken = tmp_path / "decoders"
    shutil.copytree(find_decoders()[0] / "bootmarkers", broken / "bootmarkers")
    pd = broken / "bootmarkers" / "pd.py"
    pd.write_text(pd.read_text().replace("def decode(self) -> None:\n", _RAISE))
    monkeypatch.setenv("BOOTRIG_DECODERS_DIR", str(broken))
    cap = capture(tmp_path / "c.sr", ["power"])
    with pytest.raises(RigError) as info:
        scan_markers(cap)
    msg = str(info.value)
    assert str(cap) in msg and "sigrok-cli -i" in msg and "deliberately broken" in msg


_RAISE = "def decode(self) -> None:\n        raise RuntimeError('deliberately broken')\n"


def test_bad_decoders_dir_and_no_power(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cap = capture(tmp_path / "c.sr", ["bootm", "uart_tx"])
    with pytest.raises(ArtifactError, match="no 'power' channel"):
        scan_markers(cap)
    monkeypatch.setenv("BOOTRIG_DECODERS_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match=r"BOOTRIG_DECODERS_DIR=.* no bootmarkers/pd\.py"):
        find_decoders()


def test_sigrok_cli_is_real() -> None:
    # Guard against a PATH that shadows sigrok-cli with a stub: these tests mean the real one.
    out = subprocess.run(["sigrok-cli", "--version"], capture_output=True, text=True, check=True)
    assert "libsigrokdecode" in out.stdout and shutil.which("sigrok-cli")
