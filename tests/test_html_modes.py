"""Two ways a page gets plotly.js: the one shared copy beside the run folders, or embedded
in a page that stands alone (docs/report-html.md, "Size and browsers")."""

from __future__ import annotations

import re

from click.testing import CliRunner

from rig.commands.report import report
from rig.sinks.html import plotlyjs
from rig.sinks.html.write import boot_page
from tests.sample_report import sample_report


def test_a_page_names_only_modes_the_rig_has() -> None:
    """Its hints (an older browser, a shared file that did not load) name a `--js` mode
    `rig report` takes."""
    assert plotlyjs.MODES == ("shared", "gzip")
    for mode in plotlyjs.MODES:
        src = "../.bootrig-assets/plotly.min.js" if mode == plotlyjs.SHARED else None
        page = boot_page(sample_report(1), [], mode, src)
        named = set(re.findall(r"--js (\w+)", page))
        assert named <= set(plotlyjs.MODES), (mode, named)
        assert 'id="figures-gz"' in page  # the figures' JSON is always packed


def test_rig_report_refuses_a_third_mode() -> None:
    out = CliRunner().invoke(report, ["results", "--js", "inline"])
    assert out.exit_code == 2 and "Invalid value for '--js'" in out.output
