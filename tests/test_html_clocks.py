"""report.html's tables print times by the terminal's rule: on the report's t = 0, or
saying their clock, or not as a time (issue 22 item 4, in the HTML page too)."""

from __future__ import annotations

from html import unescape
from html.parser import HTMLParser
from pathlib import Path

from rig.measure.pipeline import analyze_folder
from rig.sinks.html.tables import slowest_initcalls, stages, top
from rig.sinks.html.timeline import boot_figure
from tests.test_terminal_clocks import REAL, no_power_edge_folder


class _Table(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def rows(html: str) -> list[dict[str, str]]:
    """The first table in `html`, its rows as {header: cell}."""
    p = _Table()
    p.feed(html[: html.index("</table>")])
    head, *body = p.rows
    return [dict(zip(head, r, strict=True)) for r in body]


def test_a_boot_without_t0_shows_no_start_on_a_clock_it_does_not_name(tmp_path: Path) -> None:
    report = analyze_folder(no_power_edge_folder(tmp_path), write=False)
    assert report.outcome == "no_power_edge"
    page = stages(report)
    assert "No t = 0" in page
    assert all(r["start"] == "—" for r in rows(page))
    assert any(r["duration"] != "—" for r in rows(page))
    for html in (top(report), slowest_initcalls(report)):
        got = rows(html)
        shown = [r for r in got if r["start"] != "—"]
        assert shown, "the initcalls keep their kernel-clock starts"
        for r in got:  # a start is shown only with the kernel clock named beside it
            assert (r["start"] != "—") == (r["clock"] == "kernel"), r
        assert "seconds since the kernel's clock started" in unescape(html)
    axes = [a.title.text for a in boot_figure(report, []).select_xaxes() if a.title.text]
    assert axes and all("no t = 0" in a and "from power-on" not in a for a in axes), axes


def test_a_boot_with_t0_shows_its_starts_as_before() -> None:
    report = analyze_folder(REAL / "initcall-debug-1", write=False)
    assert report.outcome == "ok"
    for html in (stages(report), top(report), slowest_initcalls(report)):
        got = rows(html)
        assert got and "clock" not in got[0]  # all on t = 0: no column for it
        assert all(r["start"] != "—" for r in got)
        assert "No t = 0" not in html and "kernel's clock started" not in unescape(html)
    axes = [a.title.text for a in boot_figure(report, []).select_xaxes() if a.title.text]
    assert axes and all(a.startswith("seconds from power-on") for a in axes), axes
