"""`rig soak` judges the percentile budgets of its board *and variant* (config/budgets.toml
through rig.config.budgets): the summary's verdicts from a journal, and real soaks of the
simulated fast board (variant `test`) whose board budget it would fail but whose
variant's it meets, and the other way round."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rig.model.budgets import Budgets
from rig.model.soak import CycleRecord, EndRecord, HeaderRecord
from rig.model.summary import SoakSummary
from rig.soak.journal import SCHEMA, Journal, read_records
from rig.soak.run import exit_code
from rig.soak.signals import StopFlag
from rig.soak.summary import summarize
from tests.conftest import REPO
from tests.e2e import make_config

KERNEL = [0.10, 0.11, 0.12, 0.13, 0.30]  # ok boots; a hang's kernel does not count


def _journal(folder: Path) -> list[object]:
    head = HeaderRecord(schema=SCHEMA, soak_id="s", stages=["kernel", "init"], board="b",
                        started_utc="2025-01-01T00:00:00Z")  # fmt: skip
    with Journal.create(folder, head) as j:
        for i, k in enumerate(KERNEL, start=1):
            j.append(CycleRecord(cycle=i, run_id=f"r{i}", outcome="ok", power_to_ui_s=k + 0.1,
                                 stages={"kernel": k, "init": None}))  # fmt: skip
        j.append(CycleRecord(cycle=6, run_id="r6", outcome="hang_in_init", stages={"kernel": 9.0}))
        j.append(EndRecord(reason="completed"))
    return list(read_records(folder / "journal.jsonl")[0])


def test_summary_judges_each_percentile_budget(tmp_path: Path) -> None:
    records = _journal(tmp_path / "soak")
    budgets = Budgets(
        path=Path("budgets.toml"),
        board="b",
        variant="v",
        own_variant=True,
        percentiles={50.0: {"kernel": 0.12, "init": 1.0}, 95.0: {"power_to_ui_s": 0.35}},
    )
    s = summarize(tmp_path / "soak", records, budgets=budgets)  # type: ignore[arg-type]
    assert s.budgets is not None and not s.budgets.within
    got = {(c.what, c.percentile): c for c in s.budgets.checks}
    p50 = got[("kernel", 50.0)]
    assert (p50.n, p50.value_s, p50.within) == (5, pytest.approx(0.12), True)
    p95 = got[("power_to_ui", 95.0)]  # linear between ranks: 0.23 + 0.8 * 0.17
    assert p95.value_s == pytest.approx(0.366) and p95.budget_s == 0.35 and not p95.within
    init = got[("init", 50.0)]  # no ok boot measured it: not within
    assert (init.n, init.value_s, init.within) == (0, None, False)
    # summary.json carries them, and reads back the same
    data = s.to_json()
    assert data["budgets"]["file"] == "budgets.toml" and data["budgets"]["variant_table"]
    assert SoakSummary.from_json(json.loads(json.dumps(data))).to_json() == data
    assert exit_code("completed", s, 0.5, StopFlag()) == 1  # failure rate 1/6 is fine
    # without budgets: no key at all (summary.json as before)
    plain = summarize(tmp_path / "soak", records)  # type: ignore[arg-type]
    assert "budgets" not in plain.to_json()
    assert exit_code("completed", plain, 0.5, StopFlag()) == 0


BUDGETS = """
schema = "bootrig.budgets/1"
[boards.fastboard.percentiles.95]     # no fast board meets these ...
power_to_ui_s = 0.01
kernel = 0.001
[boards.fastboard.variants.test.percentiles.95]    # ... its variant `test` does
power_to_ui_s = 0.5
kernel = 0.5
"""


def soak(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "rig", "soak", "--config", str(config), "--cycles", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=REPO)


@pytest.mark.slow
def test_rig_soak_judges_the_variants_budgets(tmp_path: Path) -> None:
    keys = {"boot_s": 1.0, "post_ui_s": 0.02}
    config = make_config(tmp_path, off_hold_s=0.05, set_keys=keys)  # fast.toml: variant test
    (tmp_path / "budgets.toml").write_text(BUDGETS)  # found next to the config

    proc = soak(config, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    b = json.loads(proc.stdout)["budgets"]
    assert (b["board"], b["variant"], b["variant_table"], b["within"]) == (
        "fastboard", "test", True, True,
    )  # fmt: skip
    assert [(c["what"], c["n"], c["budget_s"], c["within"]) for c in b["checks"]] == [
        ("power_to_ui", 2, 0.5, True), ("kernel", 2, 0.5, True),
    ]  # fmt: skip

    # A budgets file named on the command line: over the variant's kernel budget.
    other = tmp_path / "strict.toml"
    other.write_text(BUDGETS.replace("kernel = 0.5", "kernel = 1e-4"))
    proc = soak(config, "--budgets", str(other))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "percentile budgets from" in proc.stdout and "over" in proc.stdout
    assert "[boards.fastboard.variants.test]" in proc.stdout

    # A bad budgets file stops the soak before the board is touched, naming the key.
    other.write_text("[boards.fastboard.variants.test.stages]\nkernal = 1\n")
    proc = soak(config, "--budgets", str(other), "--json")
    assert proc.returncode == 2
    error = json.loads(proc.stdout)["error"]
    assert "strict.toml: key 'boards.fastboard.variants.test.stages.kernal': not a stage" in error
    assert len(list((tmp_path / "results").glob("*/journal.jsonl"))) == 2  # the two above
