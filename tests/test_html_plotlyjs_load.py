"""A `shared` report.html in headless Chromium says only what it observed about plotly.js
(issue 22, item 13): that the browser could not load the file, or that the file loaded
and defined no Plotly; and a file that defines Plotly after the page's scripts ran (it
had not loaded yet) is waited for, not called missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rig.sinks.html import plotlyjs
from tests.test_html_browser import chromium, dom
from tests.test_html_report import real_run

GUESSES = ("probably", "copied", "not there", "missing")


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One boot of the fast board through `rig run`: its report.html is a shared page."""
    return real_run(tmp_path_factory.mktemp("plotlyjs-load"))


def copy_results(run_folder: Path, to: Path) -> tuple[Path, Path]:
    """The run folder and its results folder's shared asset, copied: (page, asset)."""
    shutil.copytree(run_folder.parent, to)
    return to / run_folder.name / "report.html", to / plotlyjs.ASSETS / plotlyjs.asset_name()


def figure_error(text: str) -> str:
    start = text.index('<p class="figure-error">') + len('<p class="figure-error">')
    return text[start : text.index("</p>", start)]


def test_asset_that_cannot_load_is_named_not_explained(run_folder: Path, tmp_path: Path) -> None:
    page, asset = copy_results(run_folder, tmp_path / "results")
    asset.unlink()
    text = chromium(tmp_path, page, "--dump-dom")
    assert 'data-plotted="' not in text
    error = figure_error(text)
    assert f"plotly.js did not load from {asset.resolve().as_uri()}" in error, error
    assert not any(guess in error for guess in GUESSES), error
    assert "rig report" in error and "--js gzip" in error  # the way to a page that draws
    assert "stages-table" in text  # the tables are all there


def test_asset_that_defines_plotly_late_is_waited_for(run_folder: Path, tmp_path: Path) -> None:
    """The shared file is there, but Plotly exists only after the page's own scripts
    ran: this file inserts the real plotly.js as a script of its own, which the browser
    runs later (still before the window's load event)."""
    page, asset = copy_results(run_folder, tmp_path / "results")
    real = tmp_path / "elsewhere" / "plotly.min.js"
    real.parent.mkdir()
    shutil.copyfile(asset, real)
    asset.write_text(
        "(function () { var s = document.createElement('script');"
        f" s.src = {str(real.resolve().as_uri())!r}; document.head.appendChild(s); }})();"
    )
    d = dom(tmp_path, page)
    assert d.body.get("data-plotted") == "1", "the figures were not drawn"
    assert d.classes["timeline"]["main-svg"] >= 2


def test_asset_that_loads_without_plotly_says_so(run_folder: Path, tmp_path: Path) -> None:
    page, asset = copy_results(run_folder, tmp_path / "results")
    asset.write_text("// not plotly.js\n")
    text = chromium(tmp_path, page, "--dump-dom")
    error = figure_error(text)
    assert f"plotly.js loaded from {asset.resolve().as_uri()}" in error, error
    assert "did not define Plotly" in error, error
    assert not any(guess in error for guess in GUESSES), error
