"""report.html's figures and tables from real artifact folders (the simulated board),
with synthetic initcalls and advisories until the analysis fills them, and `rig report`."""

from __future__ import annotations

import copy
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rig.artifacts.rundir import read_json, write_json
from rig.commands.report import report
from rig.model import Report
from rig.sinks.html.console import console_lines
from rig.sinks.html.flame import pack
from rig.sinks.html.timeline import boot_figure, end_of_boot
from rig.sinks.html.write import boot_page
from tests.conftest import REPO
from tests.e2e import make_config
from tests.sample_report import sample_report


def real_run(tmp: Path) -> Path:
    """One boot of the simulated fast board through `rig run`; its artifact folder."""
    proc = subprocess.run(
        [sys.executable, "-m", "rig", "run", "--config", str(make_config(tmp)), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return Path(json.loads(proc.stdout)["folder"])


def synthetic_initcalls(report: dict[str, Any], n: int = 40) -> list[dict[str, Any]]:
    """Initcalls in the report's kernel stage (the shape the analysis writes), two of
    them async (overlapping the next), the last never returning."""
    kernel = next(s for s in report["stages"] if s["name"] == "kernel")
    rnd = random.Random(7)
    t, step = kernel["start_s"] + 0.01, (kernel["duration_s"] - 0.02) / n
    calls = []
    for i in range(n):
        d = step * rnd.uniform(0.2, 0.95) * (6 if i in (5, 21) else 1)
        calls.append(
            {"name": f"probe_{i:02d}_init", "function": f"probe_{i:02d}_init",
             "module": "mmc_block" if i % 7 == 0 else None, "start_s": t, "duration_s": d,
             "return": 0, "source": "printk", "uncertainty_s": 4e-6, "returned": True}
        )  # fmt: skip
        t += step
    calls[-1].update(duration_s=None, returned=False, **{"return": None})
    return calls


def with_extras(report: dict[str, Any]) -> dict[str, Any]:
    r = copy.deepcopy(report)
    r["initcalls"] = synthetic_initcalls(r)
    tagged = [e for e in r["events"] if "line" in e]
    r["advisories"] = [
        {"rule": "uboot_bootdelay", "title": "U-Boot waits for a key <press>", "gain_s": 0.5,
         "gain_kind": "measured", "advice": "Set bootdelay=0 & silence the console.",
         "evidence": [{"line": e["line"], "text": e["text"], "t_s": e["t_s"],
                       "source": e["source"]} for e in tagged[:2]]},
        {"rule": "untimed", "title": "Evidence without a time", "gain_s": 0.01,
         "evidence": [{"text": "a line"}], "advice": ""},
    ]  # fmt: skip
    return r


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return real_run(tmp_path_factory.mktemp("html-run"))


def trace(fig: Any, name: str) -> Any:
    return next(t for t in fig.data if t.name == name)


def test_console_lines_agree_with_the_analysis(run_folder: Path) -> None:
    rep = read_json(run_folder / "report.json")
    lines = console_lines(Report.from_json(rep), run_folder)
    assert len(lines) == rep["console"]["lines"]
    times = {c["line"]: c for c in rep["console_times"]}
    for c in lines:  # the same line, the same clock, the same time
        t = times[c.index]
        assert (c.t_s, c.uncertainty_s, c.source) == (t["t_s"], t["uncertainty_s"], t["source"])
    # A console-pattern boundary sits on the page where its line is.
    checked = 0
    for s in rep["stages"]:
        for side in ("start", "end"):
            b = s[side]
            if b and b["event"].startswith("console:"):
                first = next(c for c in lines if re.search(b["event"][8:], c.text))
                assert first.t_s == pytest.approx(s[f"{side}_s"], abs=1e-12)
                checked += 1
    assert checked


def test_timeline_figure(run_folder: Path) -> None:
    rep = with_extras(read_json(run_folder / "report.json"))
    model = Report.from_json(rep)
    fig = boot_figure(model, console_lines(model, run_folder))
    stages = trace(fig, "stages")
    assert list(stages.y) == [s["name"] for s in rep["stages"]]
    assert list(stages.base) == [s["start_s"] for s in rep["stages"]]
    bounds = trace(fig, "boundary ± uncertainty")
    assert len(bounds.x) == 2 * len(rep["stages"])
    assert max(bounds.error_x.array) == max(s["end"]["uncertainty_s"] for s in rep["stages"])
    calls = trace(fig, "initcalls")
    assert len(calls.x) == 39 and set(calls.y) == {1, 2}  # the async ones stack
    assert max(calls.marker.color) == pytest.approx(max(calls.x) * 1e3)  # colour = duration
    hung = trace(fig, "initcalls that never returned")
    assert hung.text == ("probe_39_init (never returned)",)
    # ... to the end of the record: the last thing the boot said (here the ui_ready tag
    # line, a few microseconds after its GPIO edge).
    end = hung.base[0] + hung.x[0]
    assert end == pytest.approx(end_of_boot(model, console_lines(model, run_folder)))
    assert rep["power_to_ui_s"] <= end < rep["power_to_ui_s"] + 1e-3
    # the frames under the initcalls: the kernel stage, and the ones the hung call spans
    assert trace(fig, "stage").text == ("kernel", "rootfs_mount", "init", "application")
    star = trace(fig, "advisory evidence")
    assert len(star.x) == 2 and "&lt;press&gt;" in star.hovertext[0]
    gpio = [e for e in rep["events"] if e["source"] == "gpio"]
    assert len(fig.layout.shapes) == len(gpio)


def test_empty_initcalls_and_a_failed_boot(run_folder: Path) -> None:
    rep = read_json(run_folder / "report.json")
    for s in rep["stages"][3:]:
        s.update(end_s=None, duration_s=None, uncertainty_s=None)
    rep.update(outcome="hang_in_init", power_to_ui_s=None, initcalls=[])
    model = Report.from_json(rep)
    fig = boot_figure(model, [])
    assert list(trace(fig, "not reached").y) == ["init", "application"]
    notes = [a.text for a in fig.layout.annotations]
    assert any("No initcalls" in n for n in notes) and any("No console" in n for n in notes)
    html = boot_page(model, [])
    assert "hang_in_init" in html and "did not reach the UI" in html


def test_page_escapes_and_lists_advisories(run_folder: Path) -> None:
    rep = Report.from_json(with_extras(read_json(run_folder / "report.json")))
    html = boot_page(rep, console_lines(rep, run_folder), js_mode="gzip")
    assert "U-Boot waits for a key &lt;press&gt;" in html and "<press>" not in html
    assert html.count('id="advisories-table"') == 1 and "probe_05_init" in html
    # self-contained: nothing loaded from elsewhere
    assert "<script src" not in html and "<link" not in html
    assert 1e6 < len(html) < 3e6  # gzip-embedded plotly.js, ~2 MB


def test_flame_levels() -> None:
    assert pack([(0, 1), (1, 2), (0.5, 1.5), (3, 4), (0.2, 0.3)]) == [1, 1, 2, 1, 2]
    assert pack([]) == []


def sample_folders(tmp: Path, n: int) -> list[Path]:
    out = []
    for i in range(n):
        variant = "baseline" if i % 3 == 0 else "optimised"
        r = sample_report(i, initcalls=5, variant=variant).to_json()
        if i == 4:
            r.update(outcome="panic", power_to_ui_s=None)
            for s in r["stages"][2:]:
                s.update(end_s=None, duration_s=None)
        folder = tmp / "results" / r["run_id"]
        folder.mkdir(parents=True)
        write_json(folder / "report.json", r)
        out.append(folder)
    return out


def test_report_command(run_folder: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(report, [str(run_folder), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["page"] == str(run_folder / "report.html")
    assert (run_folder / "report.html").stat().st_size > 1_000_000

    folders = sample_folders(tmp_path, 7)
    out = runner.invoke(report, [str(tmp_path / "results"), "--each", "--json"])
    assert out.exit_code == 0, out.output
    res = json.loads(out.output)
    assert res["boots"] == 7 and res["page"] == str(tmp_path / "results" / "compare.html")
    assert all((f / "report.html").exists() for f in folders)
    html = (tmp_path / "results" / "compare.html").read_text()
    assert 'id="compare-dist"' in html and "panic" in html
    out = runner.invoke(report, [str(tmp_path / "results"), "--each"])
    assert out.exit_code == 0 and "and 7 report.html file(s) in the run folders" in out.output

    few = tmp_path / "few.html"
    out = runner.invoke(report, [*map(str, folders[:2]), "--out", str(few), "--js", "shared"])
    assert out.exit_code == 0, out.output
    assert 'id="compare-stages"' in few.read_text() and 'id="compare-dist"' not in few.read_text()

    out = runner.invoke(report, [str(tmp_path / "nowhere"), "--json"])
    assert out.exit_code == 2 and "no such folder" in json.loads(out.output)["error"]


def test_comparison_names_the_report_that_cannot_be_read(tmp_path: Path) -> None:
    folders = sample_folders(tmp_path, 3)
    bad = folders[1] / "report.json"
    r = read_json(bad)
    r["stages"][0]["duration_s"] = "fast"
    write_json(bad, r)
    out = CliRunner().invoke(report, [str(tmp_path / "results"), "--json"])
    assert out.exit_code == 2, out.output
    error = json.loads(out.output)["error"]
    assert str(bad) in error and "stages[0].duration_s" in error
    assert not (tmp_path / "results" / "compare.html").exists()
