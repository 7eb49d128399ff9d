"""Artifacts that contradict themselves (outcome `invalid_artifacts`, the reasons in the
report): the numbers are still computed and shown, never passed off as a boot's.
"""

from __future__ import annotations

from collections.abc import Sequence

from rig.analysis.lines import Line
from rig.analysis.stages import Stage
from rig.model import Chunk, MarkerScan, Run
from rig.model.uart import UartBytes

#: Bad frames a sound capture at the right rate shows at most (line noise at power-on,
#: a frame cut at the capture's end): beyond this fraction the rate is wrong.
FRAME_ERROR_RATIO = 0.02
#: Fewer UART bytes than this prove nothing either way.
MIN_UART_BYTES = 64
#: How far host stamps and the analyzer clock may disagree without a contradiction:
#: a read is stamped after its bytes arrived, never before, but the power-on stamp is
#: taken just before the command, and the two clocks meet only through that stamp.
CLOCK_SLACK_S = 0.002


def unfinished(run: Run) -> str | None:
    """Why a run that `rig run` started did not end as a cycle does: run.json says `state:
    running`, or has neither `state` nor `completed_utc` (docs/contract.md, "run.json
    state"). A folder without the mark is complete, whoever wrote it."""
    if run.is_bare or not run.unfinished:
        return None
    if run.state is None:
        return (
            f"run.json (rig {run.rig_version}, before run.json state) has no completed_utc: "
            "the rig stopped before the cycle ended (killed, crashed, or its disk filled); "
            "what it measured is kept but is not a boot's result"
        )
    return (
        "run.json says state 'running': the rig stopped before the cycle ended (killed, "
        "crashed, or its disk filled); what it measured is kept but is not a boot's result"
    )


def run_problems(run: Run, has_capture: bool) -> list[str]:
    cap = run.capture
    if cap is not None and cap.samples and not has_capture:
        return [
            f"run.json records a capture of {cap.samples} samples but capture.sr is "
            "missing: the boundaries it timed cannot be checked"
        ]
    return []


def console_problems(chunks: Sequence[Chunk]) -> list[str]:
    for i in range(1, len(chunks)):
        if chunks[i].t_ns < chunks[i - 1].t_ns:
            back = (chunks[i - 1].t_ns - chunks[i].t_ns) / 1e9
            return [
                f"console.jsonl record {i + 1}: t_ns goes back {back:.6f} s from the record "
                "before it; a host's monotonic clock never does"
            ]
    return []


def tag_problems(lines: Sequence[Line], power_on_ns: int) -> list[str]:
    early = [ln for ln in lines if ln.tag and ln.t_ns < power_on_ns - CLOCK_SLACK_S * 1e9]
    if not early:
        return []
    ln = early[0]
    return [
        f"console line {ln.index} (tag {ln.tag}) arrived {(power_on_ns - ln.t_ns) / 1e9:.6f} s "
        "before power-on (run.json power_on_ns): the console times and the power-on stamp "
        "are not one clock"
    ]


def uart_problems(uart: UartBytes | None) -> list[str]:
    if uart is None or len(uart.data) < MIN_UART_BYTES or not uart.baud:
        return []
    ratio = uart.frame_errors / len(uart.data)
    if ratio <= FRAME_ERROR_RATIO:
        return []
    return [
        f"capture: {uart.frame_errors} UART frame errors in {len(uart.data)} bytes on "
        f"{uart.channel} at {uart.baud} baud and the stated {uart.samplerate} Hz: the "
        "capture's sample rate (its metadata) or the console's baud rate is wrong"
    ]


def edge_problems(
    scan: MarkerScan | None,
    gpio: dict[str, float],
    lines: Sequence[Line],
    power_on_ns: int,
) -> list[str]:
    """A hook's tag is printed after its GPIO edge: on the capture's clock (t = 0 at the
    power edge, which follows the power-on command) the tag cannot arrive sooner."""
    if scan is None or not scan.power_channel:
        return []  # no power edge: the capture and the host share no origin
    for ln in lines:
        if ln.tag not in gpio:
            continue
        arrived_s = (ln.t_ns - power_on_ns) / 1e9
        if arrived_s < gpio[ln.tag] - CLOCK_SLACK_S:
            return [
                f"the console tag of {ln.tag} arrived at {arrived_s:.6f} s, before its edge "
                f"on the capture at {gpio[ln.tag]:.6f} s: the capture's stated sample rate "
                f"({scan.samplerate} Hz) is too low, or its clock is not the one it states"
            ]
    return []


def stage_problems(stages: Sequence[Stage]) -> list[str]:
    out = []
    for s in stages:
        if s.start is None or s.end is None:
            continue
        slack = s.start.uncertainty_s + s.end.uncertainty_s + 1e-9
        if s.end.t_s - s.start.t_s < -slack:
            out.append(
                f"stage {s.name!r} ends at {s.end.t_s:.6f} s, before it starts at "
                f"{s.start.t_s:.6f} s"
            )
    return out


def problems(
    chunks: Sequence[Chunk],
    lines: Sequence[Line],
    power_on_ns: int,
    scan: MarkerScan | None,
    gpio: dict[str, float],
    uart: UartBytes | None,
    stages: Sequence[Stage],
) -> list[str]:
    """Every contradiction found, in the order of the checks above."""
    return (
        console_problems(chunks)
        + tag_problems(lines, power_on_ns)
        + uart_problems(uart)
        + edge_problems(scan, gpio, lines, power_on_ns)
        + stage_problems(stages)
    )
