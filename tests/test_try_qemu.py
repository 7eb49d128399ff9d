"""`rig try` on the real QEMU target: a boot with `rootdelay=3` gets the `root_wait`
advisory (knob: remove rootdelay); `rig try` boots without and with the knob,
interleaved, and measures about the 3 s the advisory predicted, with the boot's outcome
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
from tests.test_qemu_real import images  # noqa: F401 (a fixture)


def _try(*args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    p = subprocess.run(
        [sys.executable, "-m", "rig", "try", *args, "--json"],
        capture_output=True, text=True, timeout=900, cwd=REPO,
    )  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, json.loads(p.stdout)


def test_removing_rootdelay_gains_its_seconds(tmp_path: Path, images: Path) -> None:  # noqa: F811
    cfg = qemu_config(tmp_path, images)
    text = cfg.read_text()
    cfg.write_text(text.replace('kernel_args = ""', 'kernel_args = "rootdelay=3"', 1))
    assert cfg.read_text() != text
    code, out = rig_run(cfg)
    assert code == 0 and out["report"]["outcome"] == "ok"
    (wait,) = [a for a in out["report"]["advisories"] if a["rule"] == "root_wait"]
    assert wait["knob"]["op"] == "remove" and wait["knob"]["name"] == "rootdelay"
    assert wait["gain_s"] == pytest.approx(3.0, abs=0.05)

    code, doc = _try(out["folder"], "--config", str(cfg), "--advice", "root_wait",
                     "--pairs", "5", "--warmup", "0")  # fmt: skip
    assert code == 0, doc
    (trial,) = doc["trials"]
    assert trial["rule"] == "root_wait" and trial["sets"] == ['qemu.kernel_args=""']
    m = trial["measured"]
    assert m["verdict"] == "gained" and m["outcome_kept"], m
    assert m["outcomes_without"] == {"ok": 5} and m["outcomes_with"] == {"ok": 5}
    assert 2.5 < m["gain_s"] < 3.5 and m["ci_low_s"] > 1.5, m
    # Where the 3 s lies against the interval is the tool's finding: a 95 % interval misses
    # the truth one time in twenty, more on a host whose load moves (rig/trial/stats.py's
    # own tests check the placing).
    assert m["prediction"] in ("within", "above", "below")
    folder = Path(doc["folder"])
    assert json.loads((folder / "try.json").read_text())["trials"] == doc["trials"]
    boots = sorted(p.name for p in Path(trial["folder"]).iterdir() if p.is_dir())
    assert boots == [f"{v}-{i:04d}" for v in ("off", "on") for i in range(1, 6)]

    code, doc = _try(out["folder"], "--config", str(cfg), "--advice", "uboot_bootdelay")
    assert code == 2 and "has no such advisory (it has: root_wait" in doc["error"], doc
