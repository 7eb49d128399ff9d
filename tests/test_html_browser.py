"""report.html in a real headless browser (Debian's chromium), offline: the figures are
drawn (plotly's SVG is in the DOM after scripts ran) and the screenshot is not blank."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from rig.artifacts.rundir import read_json, write_json
from rig.sinks.html.style import PALETTE
from rig.sinks.html.write import write_comparison, write_html
from tests.test_html_report import real_run, sample_folders, with_extras

# Without the background-networking flags Chromium tries to reach the network.
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1400,1800", "--virtual-time-budget=5000",
]  # fmt: skip


def chromium(tmp: Path, page: Path, *args: str) -> str:
    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("chromium not found: apt-get install -y chromium (Debian's package)")
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"  # fresh every run
    cmd = [exe, *FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:  # our own process group: the browser and its children
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err[-2000:]
    return out


class FigureClasses(HTMLParser):
    """Class names of the elements inside each `.figure` div, by figure id."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []
        self.classes: dict[str, Counter[str]] = {}
        self.ids: set[str] = set()
        self.body: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "body":
            self.body = {k: v or "" for k, v in a.items()}
        current = self.stack[-1] if self.stack else None
        if "figure" in (a.get("class") or "").split():
            current = a.get("id")
        elif current:
            self.classes.setdefault(current, Counter()).update((a.get("class") or "").split())
        if tag not in ("path", "rect", "line", "circle", "br", "img", "input", "meta", "use"):
            self.stack.append(current)

    def handle_endtag(self, tag: str) -> None:
        if self.stack and tag not in ("path", "rect", "line", "circle", "br", "meta", "use"):
            self.stack.pop()


def dom(tmp: Path, page: Path) -> FigureClasses:
    parser = FigureClasses()
    parser.feed(chromium(tmp, page, "--dump-dom"))
    return parser


def colours(png: Path) -> Counter[object]:
    img = Image.open(png).convert("RGB")
    return Counter({c: n for n, c in img.getcolors(img.width * img.height) or []})


def rgb(colour: str) -> tuple[int, int, int]:
    r, g, b = (int(x) for x in colour.removeprefix("rgb(").removesuffix(")").split(","))
    return r, g, b


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = real_run(tmp_path_factory.mktemp("browser-run"))
    write_json(folder / "report.json", with_extras(read_json(folder / "report.json")))
    return folder


def test_boot_report_renders(run_folder: Path, tmp_path: Path) -> None:
    page = write_html(run_folder)
    d = dom(tmp_path, page)
    assert d.body.get("data-plotted") == "1", "the figures were not drawn"
    assert {"timeline", "stages-table", "advisories-table", "initcalls-table"} <= d.ids
    c = d.classes["timeline"]
    assert c["main-svg"] >= 2 and c["subplot"] >= 3
    assert c["bars"] >= 3  # stages, the stage frames and the initcalls
    assert c["point"] >= 5 + 40 + 20  # bars and markers
    assert c["errorbar"] >= 10  # the boundaries' uncertainty
    assert c["scatter"] >= 3  # boundaries, console (one trace per clock), advisory evidence
    gpio = [e for e in read_json(run_folder / "report.json")["events"] if e["source"] == "gpio"]
    assert c["shape-group"] == len(gpio) >= 5  # a line per GPIO marker through all rows
    shot = tmp_path / "boot.png"
    chromium(tmp_path, page, f"--screenshot={shot}")
    seen = colours(shot)
    assert len(seen) > 50, "blank screenshot"
    for stage_colour in PALETTE[:5]:  # every stage bar is on screen
        assert seen[rgb(stage_colour)] > 100, stage_colour


def test_comparison_renders(tmp_path: Path) -> None:
    folders = sample_folders(tmp_path, 8)
    page = write_comparison([f / "report.json" for f in folders], tmp_path / "compare.html")
    d = dom(tmp_path, page)
    assert d.body.get("data-plotted") == "2"
    assert {"compare-stages", "compare-dist", "groups-table", "boots-table"} <= d.ids
    assert d.classes["compare-stages"]["bars"] >= 5 and d.classes["compare-stages"]["point"] >= 30
    assert d.classes["compare-dist"]["boxes"] >= 4
    shot = tmp_path / "compare.png"
    chromium(tmp_path, page, f"--screenshot={shot}")
    assert len(colours(shot)) > 50
