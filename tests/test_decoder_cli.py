"""`rig decoders install|path`, and sigrok-cli finding an installed copy with no env override."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rig.artifacts.decode import repo_decoders_dir
from rig.artifacts.srzip import write_sr
from rig.commands.decoders import decoders

SIGROK_OVERRIDES = ("SIGROKDECODE_DIR", "SIGROKDECODE_PATH", "BOOTRIG_DECODERS_DIR")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SIGROK_OVERRIDES}
    env.pop("XDG_DATA_HOME", None)
    return {**env, **extra}


def sigrok(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    cmd = ["sigrok-cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A fresh HOME with no XDG_DATA_HOME and no decoder dir overrides."""
    for k in (*SIGROK_OVERRIDES, "XDG_DATA_HOME"):
        monkeypatch.delenv(k, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def test_install_dest_then_sigrok_finds_it_via_xdg(isolated: Path, tmp_path: Path) -> None:
    dest = tmp_path / "xdg" / "libsigrokdecode" / "decoders"
    res = CliRunner().invoke(decoders, ["install", "--dest", str(dest), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["installed"] == str(dest / "bootmarkers") and out["found"] is None
    assert sorted(p.name for p in (dest / "bootmarkers").iterdir()) == ["__init__.py", "pd.py"]

    env = clean_env(HOME=str(isolated), XDG_DATA_HOME=str(tmp_path / "xdg"))
    show = sigrok(env, "--show", "-P", "bootmarkers")
    assert show.returncode == 0 and "ID: bootmarkers" in show.stdout, show.stderr
    # And it decodes: a capture with one clean power-up.
    cap = tmp_path / "c.sr"
    write_sr(cap, ["power"], 1_000_000, [np.repeat(np.uint8([0, 1]), [500, 5_000])])
    run = sigrok(
        env, "-i", str(cap), "-P", "bootmarkers:power=power", "--protocol-decoder-samplenum"
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, "500-500 bootmarkers-1: power-up\n", "")


def test_install_default_goes_to_home_local_share(isolated: Path) -> None:
    res = CliRunner().invoke(decoders, ["install", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    target = isolated / ".local" / "share" / "libsigrokdecode" / "decoders" / "bootmarkers"
    assert out["installed"] == str(target)
    assert out["found"] is True  # sigrok-cli --show, run with the same HOME, no overrides
    assert (target / "pd.py").read_text() == (repo_decoders_dir() / "bootmarkers/pd.py").read_text()
    # Installing again replaces the copy instead of failing or nesting.
    again = CliRunner().invoke(decoders, ["install"])
    assert again.exit_code == 0 and not (target / "bootmarkers").exists()


def test_path(isolated: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    res = CliRunner().invoke(decoders, ["path"])
    assert (res.exit_code, res.output) == (0, f"{repo_decoders_dir()}\n")
    assert CliRunner().invoke(decoders, ["install", "--dest", str(tmp_path / "d")]).exit_code == 0
    monkeypatch.setenv("BOOTRIG_DECODERS_DIR", str(tmp_path))
    bad = CliRunner().invoke(decoders, ["path", "--json"])
    assert bad.exit_code == 2 and "no bootmarkers/pd.py" in json.loads(bad.output)["error"]
    monkeypatch.setenv("BOOTRIG_DECODERS_DIR", str(tmp_path / "d"))
    out = json.loads(CliRunner().invoke(decoders, ["path", "--json"]).output)
    assert (out["decoders_dir"], out["source"]) == (str(tmp_path / "d"), "env")
