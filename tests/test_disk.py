"""Disk per boot (issue 14 item 5): the shared plotly.js, the per-boot footprint, and
`rig prune`'s retention rule (docs/disk.md)."""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rig.artifacts.rundir import read_json, write_json
from rig.commands.prune import prune
from rig.commands.report import report
from rig.model.codec import dump
from rig.model.report import ColdBoot
from rig.sinks.html import plotlyjs
from tests.test_html_browser import chromium, dom
from tests.test_html_report import real_run

TARGET = 200_000
MEASUREMENT = {"capture.sr", "console.jsonl", "console.log", "uart.bin", "power.jsonl",
               "truth.json", ".lock"}  # fmt: skip
RAW = {"capture.sr", "console.jsonl", "console.log", "truth.json"}


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One boot of the fast board through `rig run`: its report.html is a shared page."""
    return real_run(tmp_path_factory.mktemp("disk-run"))


def test_run_writes_a_shared_page_and_one_asset(run_folder: Path) -> None:
    asset = run_folder.parent / plotlyjs.ASSETS / plotlyjs.asset_name()
    assert asset.read_bytes() == plotlyjs.get_plotlyjs().encode()
    html = (run_folder / "report.html").read_text()
    assert f' src="../{plotlyjs.ASSETS}/{plotlyjs.asset_name()}" ' in html
    assert "plotly-js-gz" not in html  # not embedded
    # written once: a second page leaves the file as it was (same inode, same mtime)
    before = asset.stat()
    plotlyjs.ensure_asset(run_folder.parent)
    after = asset.stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


def test_asset_rewritten_when_different(tmp_path: Path) -> None:
    path = plotlyjs.asset_path(tmp_path)
    path.parent.mkdir()
    path.write_text("truncated")
    assert plotlyjs.ensure_asset(tmp_path) == path
    assert path.read_bytes() == plotlyjs.get_plotlyjs().encode()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left


def test_shared_page_renders(run_folder: Path, tmp_path: Path) -> None:
    d = dom(tmp_path, run_folder / "report.html")
    assert d.body.get("data-plotted") == "1", "the figures were not drawn"
    c = d.classes["timeline"]
    assert c["main-svg"] >= 2 and c["subplot"] >= 3 and c["bars"] >= 1 and c["point"] >= 10


def test_shared_page_without_its_asset_says_why(run_folder: Path, tmp_path: Path) -> None:
    alone = tmp_path / "copied" / run_folder.name  # the run folder copied on its own
    shutil.copytree(run_folder, alone)
    text = chromium(tmp_path, alone / "report.html", "--dump-dom")
    assert 'data-plotted="' not in text
    assert 'class="figure-error"' in text and "rig report" in text and "--js gzip" in text
    assert plotlyjs.asset_name() in text and "stages-table" in text  # tables still there
    # and the fix the page names works: an embedded page draws
    res = CliRunner().invoke(report, [str(alone), "--js", "gzip", "--json"])
    assert res.exit_code == 0, res.output
    assert dom(tmp_path, alone / "report.html").body.get("data-plotted") == "1"


def test_report_js_modes(run_folder: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(run_folder, results / run_folder.name)
    res = CliRunner().invoke(report, [str(results / run_folder.name), "--js", "shared"])
    assert res.exit_code == 0, res.output
    assert plotlyjs.asset_path(results).is_file()
    res = CliRunner().invoke(report, [str(results / run_folder.name), "--json"])  # gzip
    assert res.exit_code == 0, res.output
    page = (results / run_folder.name / "report.html").read_text()
    assert "<script src" not in page and 1e6 < len(page) < 3e6


def page_figures(page: Path) -> str:
    html = page.read_text()
    packed = html.split('<script id="figures-gz" type="application/octet-stream">')[1]
    return gzip.decompress(base64.b64decode(packed.split("</script>")[0])).decode()


def test_figures_compact_and_rounded(run_folder: Path) -> None:
    """The page's figures: gzip + base64, numbers as text (not plotly's base64 float64
    arrays, which gzip cannot shrink) rounded to 0.1 µs, console times as the report's."""
    text = page_figures(run_folder / "report.html")
    assert "bdata" not in text
    fig = json.loads(text)["timeline"]
    numbers = [
        v
        for t in fig["data"]
        for arr in (t.get("x"), t.get("base"), (t.get("error_x") or {}).get("array"))
        if isinstance(arr, list)
        for v in arr
        if isinstance(v, float)
    ]
    assert len(numbers) > 50 and all(round(v, 7) == v for v in numbers)
    doc = read_json(run_folder / "report.json")
    times = {round(c["t_s"], 7) for c in doc["console_times"]}
    shown = {x for t in fig["data"] if t["name"].startswith("console (") for x in t["x"]}
    assert shown and shown <= times


def beyond_measurement(folder: Path) -> dict[str, int]:
    return {
        p.name: p.stat().st_size
        for p in folder.iterdir()
        if p.is_file() and p.name not in MEASUREMENT
    }


def test_fast_board_footprint_under_target(run_folder: Path) -> None:
    files = beyond_measurement(run_folder)
    assert {"report.json", "report.html", "run.json"} <= set(files)
    assert sum(files.values()) <= TARGET, files
    # report.json: one record a line, the same document as fully indented
    text = (run_folder / "report.json").read_text()
    doc = json.loads(text)
    assert doc["console_times"] and text.count("\n") < json.dumps(doc, indent=2).count("\n") / 3


# --- rig prune -------------------------------------------------------------------------

OLD = "2020-01-01T00:00:00.000000Z"


def _boot(results: Path, src: Path, name: str, old: bool = True, **report: Any) -> Path:
    folder = results / name
    shutil.copytree(src, folder)
    (folder / ".lock").unlink(missing_ok=True)
    (folder / "notes.txt").write_text("the scope was on channel 3\n")
    if old:
        run = read_json(folder / "run.json")
        run["started_utc"] = OLD
        write_json(folder / "run.json", run)
    if report:
        doc = read_json(folder / "report.json")
        for key, value in report.items():
            if key == "invalid":
                doc["analysis"]["invalid"] = value
            else:
                doc[key] = value
        write_json(folder / "report.json", doc)
    return folder


@pytest.fixture()
def results(run_folder: Path, tmp_path: Path) -> Path:
    """A results folder: fine old boots, failed and flagged ones, one without a report,
    one with a broken report, a new boot, a soak with two cycles, and a symlink out."""
    r = tmp_path / "results"
    r.mkdir()
    _boot(r, run_folder, "a-ok-old")
    _boot(r, run_folder, "b-panic", outcome="panic", power_to_ui_s=None)
    _boot(r, run_folder, "c-invalid", outcome="invalid_artifacts")
    _boot(r, run_folder, "d-rig-error", outcome="rig_error")
    _boot(r, run_folder, "e-contradiction", invalid=["console times go back"])
    # A whole cold_boot section, so the report reads and the flag itself keeps the boot.
    not_cold = ColdBoot(0.01, 0.001, "supply", None, None, None, 1.1, True, False, ["x"])
    _boot(r, run_folder, "f-not-cold", cold_boot=dump(not_cold))
    (_boot(r, run_folder, "g-no-report") / "report.json").unlink()
    (_boot(r, run_folder, "h-broken-report") / "report.json").write_text("{not json")
    _boot(r, run_folder, "i-new", old=False)
    soak = r / "soak-1"
    soak.mkdir()
    (soak / "journal.jsonl").write_text('{"type": "header"}\n')
    _boot(soak, run_folder, "s1-ok")
    _boot(soak, run_folder, "s2-hang", outcome="hang_in_kernel")
    outside = tmp_path / "elsewhere"
    _boot(tmp_path, run_folder, "elsewhere")
    os.symlink(outside, r / "j-link")
    return r


def listing(root: Path) -> dict[str, int]:
    out = {}
    for dirpath, _, names in os.walk(root):  # os.walk does not follow links
        for n in names:
            p = Path(dirpath) / n
            out[str(p.relative_to(root))] = os.lstat(p).st_size
    return out


def run_prune(*args: str) -> tuple[int, dict[str, Any]]:
    res = CliRunner().invoke(prune, [*args, "--json"])
    return res.exit_code, json.loads(res.stdout)


FLAGGED = ["b-panic", "c-invalid", "d-rig-error", "e-contradiction", "f-not-cold",
           "g-no-report", "h-broken-report", "soak-1/s2-hang"]  # fmt: skip


def test_prune_dry_run_deletes_nothing(results: Path, tmp_path: Path) -> None:
    before, outside = listing(results), listing(tmp_path / "elsewhere")
    code, doc = run_prune("--results", str(results), "--raw", "--dry-run")
    assert code == 0 and doc["dry_run"] and doc["bytes_freed"] > 0 and doc["files"]
    assert listing(results) == before and listing(tmp_path / "elsewhere") == outside


def test_prune_raw_keeps_failed_flagged_and_unreadable(results: Path, tmp_path: Path) -> None:
    outside = listing(tmp_path / "elsewhere")
    code, doc = run_prune("--results", str(results), "--raw")
    assert code == 0, doc
    assert doc["boots"] == 11 and doc["in_window"] == 1
    assert doc["bytes_freed"] == sum(f["bytes"] for f in doc["files"]) > 0
    kept = {str(Path(k["folder"]).relative_to(results)) for k in doc["raw_kept"]}
    assert kept == set(FLAGGED)
    for name in FLAGGED:  # raw stays; derived files may go
        files = set(os.listdir(results / name))
        assert files >= RAW, name
        assert "report.html" not in files and "uart.bin" not in files, name
    for name in ("a-ok-old", "soak-1/s1-ok"):  # fine and old: only the record is left
        assert set(os.listdir(results / name)) == {"run.json", "report.json", "notes.txt"}
    assert RAW | {"report.html", "report.json", "run.json"} <= set(os.listdir(results / "i-new"))
    assert listing(tmp_path / "elsewhere") == outside  # the symlink was not followed
    assert {"path": str(results / "j-link"), "reason": "symlink: not followed"} in doc["skipped"]
    assert (results / "soak-1" / "journal.jsonl").is_file()


def test_prune_without_raw_deletes_derived_only(results: Path) -> None:
    code, doc = run_prune("--results", str(results))
    assert code == 0 and {f["kind"] for f in doc["files"]} == {"derived"}
    assert set(os.listdir(results / "a-ok-old")) >= RAW
    assert "report.html" not in os.listdir(results / "a-ok-old")
    assert "report.html" in os.listdir(results / "i-new")


def test_prune_keep_last(results: Path) -> None:
    code, doc = run_prune(
        "--results", str(results), "--raw", "--older-than", "0", "--keep-last", "12"
    )
    assert code == 0 and doc["in_window"] == 11 and doc["files"] == []


def test_prune_one_soak_folder(results: Path) -> None:
    code, doc = run_prune("--results", str(results / "soak-1"), "--raw")
    assert code == 0 and doc["boots"] == 2
    assert set(os.listdir(results / "a-ok-old")) >= RAW  # outside the soak: untouched


def test_prune_refuses_what_is_not_a_results_folder(results: Path, tmp_path: Path) -> None:
    (tmp_path / "photos" / "2024").mkdir(parents=True)
    (tmp_path / "photos" / "2024" / "cat.jpg").write_bytes(b"\xff\xd8")
    for target in (tmp_path / "photos", results / "a-ok-old", tmp_path / "missing"):
        code, doc = run_prune("--results", str(target), "--raw")
        assert code == 2 and doc["kind"] == "input" and str(target) in doc["error"]
    assert (tmp_path / "photos" / "2024" / "cat.jpg").is_file()
    assert set(os.listdir(results / "a-ok-old")) >= RAW
    code, doc = run_prune("--results", str(results), "--older-than", "soon")
    assert code == 2 and "--older-than" in doc["error"]


def test_prune_keeps_the_raw_files_of_a_run_json_it_cannot_read(
    run_folder: Path, tmp_path: Path
) -> None:
    """A run.json that does not fit the model proves nothing about the boot: its raw
    artifacts stay, and the reason names the key (it was read as loose JSON before, and
    the fine report let them go)."""
    results = tmp_path / "results"
    results.mkdir()
    folder = _boot(results, run_folder, "k-bad-run", started_utc=OLD)  # the report's too
    run = read_json(folder / "run.json")
    run["power_on_ns"] = "at dawn"
    write_json(folder / "run.json", run)
    code, doc = run_prune("--results", str(results), "--raw")
    assert code == 0 and doc["files"] == [f for f in doc["files"] if f["kind"] == "derived"]
    (kept,) = doc["raw_kept"]
    assert "power_on_ns" in kept["reason"] and "record is incomplete" in kept["reason"]
    assert set(os.listdir(folder)) >= RAW
