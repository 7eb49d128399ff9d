"""`rig try` of an initcall advice on the real QEMU target: the variant with a wireless
LAN stack built into its 6.1 kernel (config/qemu-arm64-wifi.toml) boots with
`initcall_debug`; `init_mac80211_hwsim` (two simulated radios, 10-30 ms) gets a
`slow_initcall` advisory whose knob is `initcall_blacklist=init_mac80211_hwsim` (wireless
is an optional subsystem), while the crypto, devices' and root disk's initcalls get none.
`rig try` boots without and with the knob: the kernel skips the initcall and the boot
keeps its outcome. Needs the variant's images (`make qemu-images`; tests/require.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.instruments.drivers import driver_specs, load_config
from tests.e2e import REPO
from tests.qemu_env import qemu_config, rig_run
from tests.require import require
from tests.test_qemu_real import Target

HWSIM = "init_mac80211_hwsim"
CONFIG = "qemu-arm64-wifi.toml"


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Target:
    tmp = tmp_path_factory.mktemp("probe")
    try:
        qemu = driver_specs(load_config(qemu_config(tmp, base=CONFIG))).qemu
        assert qemu is not None
        return Target("6.1-wifi", CONFIG, qemu.image_dir())
    except ConfigError as e:
        require("qemu", f"QEMU images for config/{CONFIG} not built (make qemu-images): {e}")


@pytest.mark.slow
def test_the_hwsim_initcall_is_blacklisted_and_the_boot_keeps_its_outcome(
    tmp_path: Path, target: Target
) -> None:
    debug = 'qemu.kernel_args="initcall_debug loglevel=8"'
    cfg = target.cfg(tmp_path)
    text = cfg.read_text().replace(
        'kernel_args = ""', 'kernel_args = "initcall_debug loglevel=8"', 1
    )
    cfg.write_text(text)
    code, out = rig_run(cfg)
    assert code == 0 and out["report"]["outcome"] == "ok", out["report"]["outcome"]
    slow = [a for a in out["report"]["advisories"] if a["rule"] == "slow_initcall"]
    (hwsim,) = [a for a in slow if HWSIM in a["title"]]
    assert hwsim["knob"]["kind"] == "kernel_arg"
    assert (hwsim["knob"]["name"], hwsim["knob"]["value"]) == ("initcall_blacklist", HWSIM)
    others = [a for a in slow if a is not hwsim]
    assert others and all(a["knob"]["kind"] == "none" for a in others), others

    p = subprocess.run(
        [sys.executable, "-m", "rig", "try", out["folder"], "--config", str(cfg), "--json",
         "--advice", "slow_initcall", "--pairs", "6", "--warmup", "1", "--set", debug],
        capture_output=True, text=True, timeout=1500, cwd=REPO,
    )  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    assert p.returncode == 0, doc
    (trial,) = doc["trials"]  # the others have no knob: untried, with the reason
    assert trial["sets"] == [
        f'qemu.kernel_args="initcall_debug loglevel=8 initcall_blacklist={HWSIM}"'
    ]
    assert {r for r, _ in doc["untried"]} <= {"slow_initcall"}
    m = trial["measured"]
    assert m["outcome_kept"] and m["outcomes_with"] == {"ok": 6}, m
    # The kernel skipped it in every boot with the knob: a blacklisted initcall is never
    # called, so initcall_debug has no line for it. Without the knob it is called (the
    # console of a TCG boot on a loaded host once lost a third of its initcall lines, so
    # not every boot's console is required to show it).
    on = sorted(Path(trial["folder"]).glob("on-*"))
    off = sorted(Path(trial["folder"]).glob("off-*"))
    assert len(on) == len(off) == 6
    calls = {b.name: f"calling  {HWSIM}+" in (b / "console.log").read_text(errors="replace")
             for b in on + off}  # fmt: skip
    assert not any(calls[b.name] for b in on), calls
    assert any(calls[b.name] for b in off), calls
    for b in on:
        assert f"initcall_blacklist={HWSIM}" in (b / "console.log").read_text(errors="replace")
    # The few ms it takes are far inside TCG's run-to-run spread: the verdict is the
    # measurement's (docs/try.md), only `broke` would be wrong here.
    assert m["verdict"] in ("gained", "no_gain"), m


def test_the_wireless_fragment_keeps_every_line_of_the_hooked_one() -> None:
    """kernel-wifi.config is kernel.config plus the wireless stack: a line added to the
    hooked target's fragment must reach the variant too."""
    hooks = REPO / "firmware-hooks" / "qemu-arm64"
    wanted = [ln for ln in (hooks / "kernel.config").read_text().splitlines()
              if ln.startswith("CONFIG_") or ln.endswith(" is not set")]  # fmt: skip
    have = set((hooks / "kernel-wifi.config").read_text().splitlines())
    assert wanted and [ln for ln in wanted if ln not in have] == []
    assert "CONFIG_MAC80211_HWSIM=y" in have
