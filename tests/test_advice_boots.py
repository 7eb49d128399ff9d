"""Advice to trust on whole boots: QEMU's unpaced PL011 (recorded real boots) and the
simulated board's paced console, checked against its ground truth."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.measure.cycle import run_cycle
from rig.measure.pipeline import analyze_folder
from rig.model import Report
from rig.sinks.html.write import boot_page
from rig.sinks.terminal import top_table
from tests.e2e import make_config, truth_boot

REAL = Path(__file__).parent / "data" / "real"
REAL_BOOTS = sorted(p for p in REAL.glob("*/") if (p / "console.jsonl").exists())
CONSOLE_RULES = ("console_output", "uboot_console")


def _arrivals(folder: Path) -> list[int]:
    return [json.loads(x)["t_ns"] for x in (folder / "console.jsonl").read_text().splitlines()]


def _check_gains(report: dict[str, Any], console_span_s: float) -> None:
    for a in report["advisories"]:
        assert a["basis"], a["rule"]
        assert 0 <= a["gain_s"] <= a["evidence_s"] + 1e-9, (a["rule"], a["title"])
        if a["rule"] in CONSOLE_RULES:
            assert a["evidence_s"] <= console_span_s, a


@pytest.mark.parametrize("boot", REAL_BOOTS, ids=lambda p: p.name)
def test_unpaced_real_console_claims_no_console_cost(boot: Path) -> None:
    report = analyze_folder(boot, write=False).to_json()
    t = _arrivals(boot)
    span = (t[-1] - t[0]) / 1e9
    pacing = report["console"]["pacing"]
    # QEMU's PL011 writes as fast as the guest does: a chatty boot shows more bytes than
    # 115200 baud can carry in the time they took. A quiet one never runs busy enough
    # to tell; either way no console cost is claimed.
    if pacing["wire_s"] > 0.3:
        assert pacing["verdict"] == "unpaced" and pacing["deficit_s"] > pacing["slack_s"]
        assert any("not paced" in n for n in report["analysis"]["notes"])
    else:
        assert pacing["verdict"] in ("unpaced", "unknown")
        assert any("pacing unknown" in n or "not paced" in n for n in report["analysis"]["notes"])
    assert not [a for a in report["advisories"] if a["rule"] in CONSOLE_RULES]
    _check_gains(report, span)
    # Nothing in the top table is longer than the console that told of it.
    assert all(r["duration_s"] <= span for r in report["top"])
    assert report["unattributed"]["total_s"] <= span


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One boot of the board `make demo` boots (the optimised Ecovec profile)."""
    tmp = tmp_path_factory.mktemp("demo")
    cfg = load_config(make_config(tmp, board="ecovec-optimised.toml"))
    with Instruments(cfg) as bench:
        result = run_cycle(cfg, bench)
    return result.folder, analyze_folder(result.folder, write=False).to_json()


@pytest.mark.slow
def test_paced_sim_console_cost_is_its_wire_time_bounded_by_the_reads(
    demo: tuple[Path, dict[str, Any]],
) -> None:
    folder, report = demo
    assert report["console"]["pacing"]["verdict"] == "paced"
    t = _arrivals(folder)
    _check_gains(report, (t[-1] - t[0]) / 1e9)
    (con,) = [a for a in report["advisories"] if a["rule"] == "console_output"]
    # The simulated console is synchronous: the kernel waited for each of its bytes.
    lines = truth_boot(folder)["lines"]
    sent = [b["bytes"] - a["bytes"] for a, b in itertools.pairwise(lines)]
    sent.append(len(lines[-1]["text"]))  # the last line: up to its end
    true = sum(n for ln, n in zip(lines, sent, strict=True) if ln["printk_ts"] is not None)
    true *= 10 / 115200
    assert con["gain_s"] == pytest.approx(true, rel=0.02)
    assert con["gain_kind"] == "estimate"


@pytest.mark.slow
def test_preset_calibration_is_not_ranked_by_the_silence_after_it(
    demo: tuple[Path, dict[str, Any]],
) -> None:
    folder, report = demo
    assert not [r for r in report["top"] if r["kind"] == "calibrate_delay"]
    assert not [p for p in report["phases"] if p["kind"] == "calibrate_delay"]
    rows = [r for r in report["top"] if "Calibrating delay loop (skipped)" in r["name"]]
    (row,) = rows
    assert row["kind"] == "unattributed" and row["stage"] == "kernel"
    # The truth: from the calibration line's last byte to the next line's first.
    lines = truth_boot(folder)["lines"]
    i = next(k for k, x in enumerate(lines) if "Calibrating delay loop" in x["text"])
    a, b = lines[i], lines[i + 1]
    silence = b["t_s"] - a["t_s"] - (b["bytes"] - a["bytes"]) * 10 / 115200
    assert row["duration_s"] == pytest.approx(silence, abs=1e-4)
    # The terminal shows the row for what it is.
    term = Console(file=io.StringIO(), width=200)
    term.print(top_table(Report.from_json(report)))
    shown = term.file.getvalue()  # type: ignore[attr-defined]
    assert any("unattributed" in ln and "Calibrating" in ln for ln in shown.splitlines())


@pytest.mark.slow
def test_report_page_shows_the_unattributed_rows_and_what_gains_rest_on(
    demo: tuple[Path, dict[str, Any]],
) -> None:
    _, report = demo
    html = boot_page(Report.from_json(report), [])
    top = html[html.index('id="top-table"') : html.index('id="advisories-table"')]
    rows = [r for r in top.split("<tr>") if 'class="unattributed"' in r]
    assert any("Calibrating delay loop" in r for r in rows)
    assert len(rows) == sum(r["kind"] == "unattributed" for r in report["top"])
    (con,) = [a for a in report["advisories"] if a["rule"] == "console_output"]
    assert f"measured: {con['basis']}" in html
