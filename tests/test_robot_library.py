"""The Robot Framework library, run by the real `robot` on suites written to tmp dirs."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest
from robot.api import ExecutionResult
from robot.libdoc import libdoc
from robot.run import run as robot_run

from rig.outcomes import Outcome
from tests.e2e import make_config

pytestmark = pytest.mark.slow

RUN_ID = r"\d{8}T\d{6}Z-[0-9a-f]{6}"
BUDGETS = """
schema = "bootrig.budgets/1"
[boards.fastboard]
power_to_ui_s = 0.5
[boards.fastboard.stages]
kernel = 0.2
[boards.fastboard.percentiles.95]
kernel = 0.2
"""


def run_suite(tmp: Path, body: str, config: Path) -> dict[str, tuple[str, str]]:
    """Run a suite; returns {test name: (status, message)}."""
    (tmp / "budgets.toml").write_text(BUDGETS)
    suite = tmp / "suite.robot"
    suite.write_text(
        "*** Settings ***\n"
        f"Library    rig.robot.BootRig    config={config}\n\n"
        "*** Test Cases ***\n" + body
    )
    out = tmp / "out"
    robot_run(str(suite), outputdir=str(out), stdout=io.StringIO(), stderr=io.StringIO())
    result = ExecutionResult(str(out / "output.xml"))
    return {t.name: (t.status, t.message) for t in result.suite.all_tests}


def sim_children() -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        kids += [int(c) for c in (task / "children").read_text().split()]
    return [k for k in kids if "simboard" in Path(f"/proc/{k}/cmdline").read_text(errors="replace")]


def test_budgets_pass_and_fail_with_a_message_that_says_it_all(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    tests = run_suite(
        tmp_path,
        f"""\
Measure
    Load Budgets    {tmp_path}/budgets.toml
    ${{r}}=    Measure Boot
    Boot Should Succeed
    Should Be Equal    ${{r}}[outcome]    ok
Within Given Budget
    Stage Should Be Within Budget    kernel    1.3s
    Power To UI Should Be Within Budget    800ms
Within Loaded Budget
    All Stages Should Be Within Budget
    Stage Should Be Within Budget    kernel
Over Budget
    Stage Should Be Within Budget    kernel    1ms
Percentile Within
    Measure Boots    2
    Stage Percentile Should Be Within Budget    kernel    95    1.4s    last=3
    Stage Percentile Should Be Within Budget    kernel    95
    ${{s}}=    Get Stage Statistics    kernel
    Should Be Equal As Integers    ${{s}}[n]    3
Percentile Over
    Stage Percentile Should Be Within Budget    kernel    95    10ms
Failure Rate
    Failure Rate Should Be At Most    0 %
""",
        config,
    )
    for name in ("Measure", "Within Given Budget", "Within Loaded Budget", "Percentile Within"):
        assert tests[name][0] == "PASS", (name, tests[name])
    assert tests["Failure Rate"][0] == "PASS"
    status, msg = tests["Over Budget"]
    assert status == "FAIL"
    m = re.fullmatch(
        rf"Boot ({RUN_ID}): stage 'kernel' took (\d+\.\d{{6}}) s, over its budget of "
        r"0\.001000 s by (\d+\.\d{6}) s \(\+\d+\.\d %\)\. Artifacts: (.+)",
        msg,
    )
    assert m, msg
    assert float(m.group(2)) - 0.001 == pytest.approx(float(m.group(3)), abs=2e-6)
    assert Path(m.group(4)).name == m.group(1) and (Path(m.group(4)) / "report.json").is_file()
    status, msg = tests["Percentile Over"]
    assert status == "FAIL" and msg.startswith("Stage 'kernel' p95 over the last 3 measured boots")
    assert len(re.findall(rf"boot {RUN_ID} \d+\.\d{{6}} s \(artifacts: /", msg)) == 3
    assert sim_children() == []  # the suite ended: its simulated board is gone


def test_a_hung_boot_fails_its_checks_with_its_outcome(tmp_path: Path) -> None:
    extra = '\n[sim.faults]\nhang = 1.0\nhang_stages = ["kernel"]\n'
    config = make_config(tmp_path, extra=extra)
    config.write_text(config.read_text().replace("boot_s = 60", "boot_s = 1"))
    tests = run_suite(
        tmp_path,
        """\
Hang
    Measure Boot
    Boot Outcome Should Be    hang_in_kernel
Hang By Class And Stage
    Boot Outcome Should Be    hang_in    stage=kernel
Any Hang
    Boot Outcome Should Be    HANG_IN
Hang Elsewhere
    Boot Outcome Should Be    hang_in    stage=init
Not A Panic
    Boot Outcome Should Be    panic
No Such Outcome
    Boot Outcome Should Be    pnic
Succeed
    Boot Should Succeed
Budget
    Stage Should Be Within Budget    kernel    1s
Unknown Stage
    Stage Should Be Within Budget    kernal    1s
""",
        config,
    )
    assert tests["Hang"][0] == "PASS", tests["Hang"]
    for name in ("Hang By Class And Stage", "Any Hang"):
        assert tests[name][0] == "PASS", tests[name]
    assert re.fullmatch(
        rf"Boot {RUN_ID}: outcome hang_in_kernel, expected hang_in_init\. Artifacts: /.+",
        tests["Hang Elsewhere"][1],
    )
    assert re.fullmatch(
        rf"Boot {RUN_ID}: outcome hang_in_kernel, expected panic\. Artifacts: /.+",
        tests["Not A Panic"][1],
    )
    assert (
        "unknown outcome 'pnic': expected one of ok, hang_in_<stage>, panic"
        in (tests["No Such Outcome"][1])
    )
    assert re.fullmatch(
        rf"Boot {RUN_ID} did not succeed: outcome hang_in_kernel\. Artifacts: /.+",
        tests["Succeed"][1],
    )
    assert re.fullmatch(
        rf"Boot {RUN_ID}: stage 'kernel' was not measured \(outcome hang_in_kernel\); its budget "
        r"is 1\.000000 s\. Artifacts: /.+",
        tests["Budget"][1],
    )
    assert tests["Unknown Stage"][1].startswith("Unknown stage 'kernal'")


def test_libdoc_builds_the_keyword_documentation(tmp_path: Path) -> None:
    out = tmp_path / "BootRig.html"
    libdoc("rig.robot.BootRig", str(out), quiet=True)
    html = out.read_text()
    for kw in (
        "Power Cycle Target",
        "Measure Boot",
        "Analyze Boot",
        "Analyse Boot",  # the old spelling, deprecated, still there for old suites
        "Boot Should Succeed",
        "Stage Should Be Within Budget",
        "Power To UI Should Be Within Budget",
        "Stage Percentile Should Be Within Budget",
        "Load Budgets",
        "Try Change",
        "Try Advice",
        "Change Should Gain",
    ):
        assert kw in html


def test_libdoc_lists_the_outcomes_boot_outcome_should_be_takes(tmp_path: Path) -> None:
    out = tmp_path / "BootRig.json"
    libdoc("rig.robot.BootRig", str(out), format="JSON", quiet=True)
    spec = json.loads(out.read_text())
    (kw,) = (k for k in spec["keywords"] if k["name"] == "Boot Outcome Should Be")
    assert [a["name"] for a in kw["args"]] == ["outcome", "stage"]
    assert [t["typedoc"] for t in kw["args"][0]["type"]["nested"]] == ["Outcome", "string"]
    (typedoc,) = (t for t in spec["typedocs"] if t["name"] == "Outcome")
    assert typedoc["type"] == "Enum"
    assert [m["value"] for m in typedoc["members"]] == [str(o) for o in Outcome]


def test_run_soak_without_a_length_takes_the_configs_as_rig_soak_does(tmp_path: Path) -> None:
    """Robot's `Run Soak` and `rig soak` share one default: `[soak] cycles` here."""
    config = make_config(tmp_path, extra="\n[soak]\ncycles = 2\n")
    tests = run_suite(
        tmp_path,
        """\
Default Length
    ${summary}=    Run Soak
    Should Be Equal As Integers    ${summary}[cycles][run]    2
""",
        config,
    )
    assert tests["Default Length"] == ("PASS", ""), tests
