"""One enumeration of outcomes (rig.outcomes) and one definition of each piece of console
evidence (rig.analysis.evidence): the contract strings, their parts, who reads them."""

from __future__ import annotations

import pytest

from rig.analysis.evidence import PANIC_BYTES, ConsoleRecord, panic_reason
from rig.analysis.lines import Line
from rig.analysis.outcome import classify
from rig.analysis.parsers.kernel import parse_kernel
from rig.analysis.stages import Stage
from rig.errors import ArtifactError
from rig.measure.cycle import _TagWatch
from rig.model import Chunk, Report, Run
from rig.model.run import RunTiming
from rig.outcomes import NOT_THE_BOARDS, BootOutcome, Outcome, is_boards
from rig.robot.boot import expected_outcome, outcome_is
from rig.sinks.influx.points import report_lines
from tests.sample_report import sample_report
from tests.test_faults_outcome import EV, LINE, SCAN, stages

#: docs/contract.md and docs/artifacts.md: tools outside the rig match on these strings.
CONTRACT = {
    "ok", "no_power_edge", "panic", "console_lost", "missing_marker", "reset", "analyzer_error",
    "rig_error", "interrupted", "invalid_artifacts",
}  # fmt: skip


def test_the_enumeration_is_the_contract() -> None:
    assert {str(BootOutcome(k)) for k in Outcome if k is not Outcome.HANG_IN} == CONTRACT
    assert {str(k) for k in NOT_THE_BOARDS} == {
        "interrupted", "rig_error", "invalid_artifacts", "analyzer_error",
    }  # fmt: skip
    assert Outcome.OK == "ok" and f"{Outcome.PANIC}" == "panic"  # a member is its string


@pytest.mark.parametrize("text", [*sorted(CONTRACT), "hang_in_kernel", "hang_in_rootfs_mount"])
def test_every_outcome_string_parses_back_to_itself(text: str) -> None:
    got = BootOutcome.parse(text)
    assert str(got) == text
    assert is_boards(text) == (text not in NOT_THE_BOARDS)


def test_a_hang_names_its_stage_and_only_a_hang_does() -> None:
    hang = BootOutcome.parse("hang_in_rootfs_mount")
    assert (hang.kind, hang.stage) == (Outcome.HANG_IN, "rootfs_mount")
    assert hang == BootOutcome.hang_in("rootfs_mount")
    for bad in ("hang_in", "hang_in_", "Panic", "", "kernel_panic"):
        with pytest.raises(ValueError, match="expected one of ok, hang_in_<stage>, panic"):
            BootOutcome.parse(bad)
    with pytest.raises(ValueError, match="a stage goes with hang_in"):
        BootOutcome(Outcome.HANG_IN)
    with pytest.raises(ValueError, match="a stage goes with hang_in"):
        BootOutcome(Outcome.PANIC, "kernel")


def test_the_panic_line_is_one_definition_for_the_cycle_the_classifier_and_the_parser() -> None:
    text = "Kernel panic - not syncing: VFS: Unable to mount root fs"
    assert panic_reason(text) == "VFS: Unable to mount root fs"
    assert panic_reason("Kernel panic - not syncing") == ""
    # Any other mention is not the kernel's panic line.
    assert panic_reason("echo Kernel panic test") is None
    line = Line(1, 20, 0, f"[    0.1] {text}".encode(), 0.1, None)
    other = Line(1, 20, 0, b"Kernel panic test", None, None)
    assert str(classify(SCAN, True, [LINE, line], stages(1, 0, 0, 0, 0))) == "panic"
    assert str(classify(SCAN, True, [LINE, other], stages(1, 0, 0, 0, 0))) == "hang_in_kernel"
    k = parse_kernel([line])
    assert k.panic is not None and k.panic.value == "VFS: Unable to mount root fs"
    # The cycle stops waiting on the same bytes, also split across reads.
    watch = _TagWatch()
    half = len(PANIC_BYTES) // 2
    watch(Chunk(1, b"[ 0.1] " + PANIC_BYTES[:half]))
    watch(Chunk(2, PANIC_BYTES[half:] + b": VFS"))
    assert watch.seen.is_set() and watch.panic


PORT_DIED = ConsoleRecord(port_error="console /dev/ttyUSB0: device reports readiness")


def test_console_lost_is_one_rule_decided_by_the_analysis() -> None:
    reached = stages(1, 1, 1, 1, 1)
    # The port died before the UI's tag: lost, whatever the capture shows.
    assert str(classify(SCAN, True, [LINE], reached, console=PORT_DIED)) == "console_lost"
    assert str(classify(SCAN, True, [LINE], stages(1, 1, 0), console=PORT_DIED)) == ("console_lost")
    # After the tag it is a note, not the outcome.
    after = ConsoleRecord(port_error="gone", ui_tag_seen=True)
    assert str(classify(SCAN, True, [LINE], reached, console=after)) == "ok"
    assert after.note() == "console port failed after the UI's tag: gone"
    # Not one byte from a recorded console: lost; no console recorded at all: not lost.
    assert str(classify(SCAN, True, [], reached)) == "console_lost"
    assert str(classify(SCAN, True, [], stages(1, 0), console=ConsoleRecord(False))) == (
        "hang_in_kernel"
    )
    # The board's own evidence comes first: its power edge, its panic line.
    no_edge = SCAN.__class__(1_000_000, 10, ("power",), power_up=(), power_down=())
    assert str(classify(no_edge, True, [], stages(0, 0), console=PORT_DIED)) == "no_power_edge"
    panic = Line(1, 20, 0, b"Kernel panic - not syncing: x", None, None)
    assert str(classify(SCAN, True, [LINE, panic], stages(1), console=PORT_DIED)) == "panic"


def _run(console_error: str | None, ui_ready_seen_ns: int | None) -> Run:
    timing = RunTiming(0.0, 0.0, 0.0, 0.0, 0.0, ui_ready_seen_ns=ui_ready_seen_ns)
    return Run(
        run_id="r",
        board="b",
        power_on_ns=0,
        started_utc=None,
        console_error=console_error,
        timing=timing,
    )


def test_console_record_reads_what_the_cycle_wrote() -> None:
    run = _run("gone", None)
    assert ConsoleRecord.of_run(run, True) == ConsoleRecord(True, "gone", False)
    assert ConsoleRecord.of_run(_run(None, 5), False) == ConsoleRecord(False, None, True)


@pytest.mark.parametrize(
    ("rig_error", "expected"),
    [
        ("analyzer_error", "analyzer_error"),
        ("rig_error", "rig_error"),
        ("console_lost", "console_lost"),  # what runs recorded before the one rule said
        ("ok", "rig_error"),  # the rig's verdict field never says the board was fine
        ("flux capacitor", "rig_error"),
    ],
)
def test_the_rigs_verdict_in_run_json(rig_error: str, expected: str) -> None:
    assert str(classify(SCAN, True, [LINE], stages(1, 1, 1, 1, 1), rig_error)) == expected


def test_stages_without_a_ui_end_are_a_hang_in_the_next_stage() -> None:
    s = [Stage("bootloader", EV, EV, None, None), Stage("kernel", EV, None, None, None)]
    assert classify(SCAN, True, [LINE], s) == BootOutcome.hang_in("kernel")


@pytest.mark.parametrize(
    ("outcome", "stage", "want"),
    [
        ("panic", None, (Outcome.PANIC, None)),
        ("PANIC", None, (Outcome.PANIC, None)),
        (Outcome.CONSOLE_LOST, None, (Outcome.CONSOLE_LOST, None)),
        ("hang_in", None, (Outcome.HANG_IN, None)),
        ("hang_in", "kernel", (Outcome.HANG_IN, "kernel")),
        ("hang_in_kernel", None, (Outcome.HANG_IN, "kernel")),
        ("hang_in_kernel", "kernel", (Outcome.HANG_IN, "kernel")),
    ],
)
def test_the_robot_keyword_takes_a_class_and_a_stage(
    outcome: str, stage: str | None, want: tuple[Outcome, str | None]
) -> None:
    assert expected_outcome(outcome, stage) == want


def test_the_robot_keyword_refuses_what_names_no_outcome() -> None:
    with pytest.raises(ValueError, match="unknown outcome 'pnic'"):
        expected_outcome("pnic", None)
    with pytest.raises(ValueError, match="only hang_in names a stage"):
        expected_outcome("panic", "kernel")
    with pytest.raises(ValueError, match="names stage kernel, stage= says init"):
        expected_outcome("hang_in_kernel", "init")
    assert outcome_is("hang_in_init", Outcome.HANG_IN, None)
    assert not outcome_is("hang_in_init", Outcome.HANG_IN, "kernel")
    assert not outcome_is("None", Outcome.OK, None)


def test_influxdb_takes_only_outcomes_of_the_enumeration() -> None:
    report = sample_report(initcalls=2).to_json()
    report["outcome"] = "hang_in_application"
    assert any(
        "outcome=hang_in_application" in line for line in report_lines(Report.from_json(report))
    )
    report["outcome"] = "exploded"
    # A report reaches the points only as a Report, and Report.from_json refuses it.
    with pytest.raises(ArtifactError, match="outcome': unknown outcome 'exploded'"):
        report_lines(Report.from_json(report))
