"""`rig try` on the real QEMU target: a boot with `rootdelay=3` gets the `root_wait`
advisory (knob: remove rootdelay), and `bootdelay=3` in U-Boot's environment flash the
`uboot_bootdelay` one (knob: bootdelay=0); `rig try` boots without and with each knob,
interleaved, and measures about the 3 s each advisory predicted, with the boot's outcome
kept (3 s, not 1: on a busy 2-core host TCG stretches a boot by a second or more). Bad
input (no such advice) is refused with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import REPO
from tests.qemu_env import qemu_config, rig_run
from tests.test_qemu_real import Target, _target


def _try(*args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    p = subprocess.run(
        [sys.executable, "-m", "rig", "try", *args, "--json"],
        capture_output=True, text=True, timeout=900, cwd=REPO,
    )  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, json.loads(p.stdout)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Target:
    return _target("linux-6.1", tmp_path_factory.mktemp("probe"))


def test_without_rootdelay_and_with_bootdelay_0_each_gains_its_seconds(
    tmp_path: Path, target: Target
) -> None:
    cfg = qemu_config(tmp_path, target.images)
    text = cfg.read_text()
    text = text.replace('kernel_args = ""', 'kernel_args = "rootdelay=3"', 1)
    cfg.write_text(text + '\n[qemu.uboot_env]\nbootdelay = "3"\n')
    assert "rootdelay=3" in cfg.read_text()
    code, out = rig_run(cfg)
    assert code == 0 and out["report"]["outcome"] == "ok"
    (wait,) = [a for a in out["report"]["advisories"] if a["rule"] == "root_wait"]
    assert wait["knob"]["op"] == "remove" and wait["knob"]["name"] == "rootdelay"
    assert wait["gain_s"] == pytest.approx(3.0, abs=0.05)
    (delay,) = [a for a in out["report"]["advisories"] if a["rule"] == "uboot_bootdelay"]
    assert (delay["knob"]["kind"], delay["knob"]["name"], delay["knob"]["value"]) == (
        "uboot_env",
        "bootdelay",
        "0",
    )
    assert delay["gain_s"] == pytest.approx(3.0, abs=0.1)

    code, doc = _try(out["folder"], "--config", str(cfg), "--advice", "root_wait",
                     "--advice", "uboot_bootdelay", "--pairs", "5", "--warmup", "0")  # fmt: skip
    assert code == 0, doc
    trials = {t["rule"]: t for t in doc["trials"]}
    assert trials["root_wait"]["sets"] == ['qemu.kernel_args=""']
    assert trials["uboot_bootdelay"]["sets"] == ['qemu.uboot_env.bootdelay="0"']
    for trial in trials.values():
        m = trial["measured"]
        assert m["verdict"] == "gained" and m["outcome_kept"], (trial["rule"], m)
        assert m["outcomes_without"] == {"ok": 5} and m["outcomes_with"] == {"ok": 5}
        assert 2.5 < m["gain_s"] < 3.5 and m["ci_low_s"] > 1.5, (trial["rule"], m)
        # Where the 3 s lies against the interval is the tool's finding: a 95 % interval
        # misses the truth one time in twenty, more on a host whose load moves (the
        # placing itself is tested in tests/test_try_stats.py).
        assert m["prediction"] in ("within", "above", "below")
        boots = sorted(p.name for p in Path(trial["folder"]).iterdir() if p.is_dir())
        assert boots == [f"{v}-{i:04d}" for v in ("off", "on") for i in range(1, 6)]
    folder = Path(doc["folder"])
    assert json.loads((folder / "try.json").read_text())["trials"] == doc["trials"]
    # The gains are recorded beside the estimates in the source report.
    assert doc["recorded"] and doc["source"] == str(Path(out["folder"]) / "report.json")
    source = json.loads(Path(doc["source"]).read_text())
    verified = {a["rule"]: a["verified"] for a in source["advisories"] if "verified" in a}
    assert set(verified) == {"root_wait", "uboot_bootdelay"}
    for rule, v in verified.items():
        m = trials[rule]["measured"]
        assert (v["gain_s"], v["ci_low_s"], v["verdict"]) == (
            m["gain_s"],
            m["ci_low_s"],
            m["verdict"],
        )
        assert v["pairs"] == 5 and v["folder"] == trials[rule]["folder"]

    code, doc = _try(out["folder"], "--config", str(cfg), "--advice", "usb_probe")
    assert code == 2 and "has no such advisory (it has: " in doc["error"], doc
