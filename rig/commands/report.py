"""`rig report DIR...`: report.html for one boot, or a comparison page for several."""

from __future__ import annotations

import os
from pathlib import Path

import click
from rich.markup import escape

from rig.artifacts.rundir import REPORT_HTML
from rig.commands.common import console, emit_json, json_option
from rig.sinks.html.plotlyjs import MODES
from rig.sinks.influx.sink import report_files

COMPARISON = "compare.html"


def _common_folder(files: list[Path]) -> Path:
    """The folder holding all the boots' run folders (usually results/), as the paths
    name it: a run folder that is a symlink must not move the page to where it points."""
    return Path(os.path.commonpath([os.path.abspath(f.parent.parent) for f in files]))


@click.command()
@click.argument("targets", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Page to write. Default: report.html in the run folder for one boot, "
    f"{COMPARISON} in the folder holding the run folders for several.",
)
@click.option("--each", is_flag=True, help="With several boots, also write each report.html.")
@click.option(
    "--js",
    "js_mode",
    type=click.Choice(MODES),
    default="gzip",
    show_default=True,
    help="How the page gets plotly.js: gzip (embedded, ~2 MB a page, for mailing) or shared "
    "(one copy in .bootrig-assets/ beside the run folders, linked: a few kB a page).",
)
@json_option
def report(
    targets: tuple[Path, ...], out: Path | None, each: bool, js_mode: str, as_json: bool
) -> None:
    """HTML report of run folders (or of every run folder in a results folder)."""
    # Here, not at the top: `rig report --help` needs no plotly (rig/commands/group.py).
    from rig.sinks.html.write import write_comparison, write_html

    # An unusable folder ends the command with 2, a page not written with 3 (json_option).
    files = report_files(targets)
    written: list[str] = []
    if len(files) == 1:
        page = str(write_html(files[0].parent, js_mode, out))
    else:
        if each:
            written += [str(write_html(f.parent, js_mode)) for f in files]
        page = str(write_comparison(files, out or _common_folder(files) / COMPARISON, js_mode))
    if as_json:
        emit_json({"boots": len(files), "page": page, "reports_html": written})
    else:
        console.print(f"{len(files)} boot(s): [bold]{escape(page)}[/]")
        if each:
            console.print(f"and {len(written)} {REPORT_HTML} file(s) in the run folders")
