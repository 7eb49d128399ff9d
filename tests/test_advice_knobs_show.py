"""An advisory's knob in report.json, the terminal, report.html and InfluxDB: it round
trips, reports from before knobs load and show as before, and each sink shows it."""

from __future__ import annotations

import io
import json

from rich.console import Console

from rig.model.report import Advisory, Report
from rig.sinks.html.tables import advisories as advisories_html
from rig.sinks.influx.points import advisory_point
from rig.sinks.terminal import advice_table
from tests.test_advice_knobs import ECOVEC, _advice
from tests.test_parse_replay import load


def _report(adv: list[Advisory]) -> Report:
    return Report(outcome="ok", advisories=adv)


def test_knobs_round_trip_and_old_reports_load() -> None:
    report = _report(_advice(load(ECOVEC)))
    obj = json.loads(json.dumps(report.to_json()))
    back = Report.from_json(obj)
    assert [a.knob for a in back.advisories] == [a.knob for a in report.advisories]
    assert back.to_json() == obj
    # A report.json from before knobs: it loads, has none, and is written back as it was.
    for a in obj["advisories"]:
        del a["knob"]
    old = Report.from_json(obj)
    assert all(a.knob is None and a.extra == {} for a in old.advisories)
    assert json.dumps(old.to_json()) == json.dumps(obj)
    # ... and shows as before: no "try:" line, no knob fields.
    assert "try:" not in _terminal(old) and 'class="knob"' not in advisories_html(old)
    assert not [k for a in old.advisories for k in advisory_point(a)[1] if k.startswith("knob")]


def _terminal(report: Report) -> str:
    term = Console(file=io.StringIO(), width=200)
    term.print(advice_table(report))
    return term.file.getvalue()  # type: ignore[attr-defined,no-any-return]


def test_terminal_html_and_influx_show_the_knob() -> None:
    report = _report(_advice(load(ECOVEC)))
    shown = _terminal(report)
    assert "try: bootdelay=0 (U-Boot env)" in shown
    assert "try: lpj=1495040 (kernel command line)" in shown
    assert "try: nothing the rig can set" in shown
    html = advisories_html(report)
    assert "<b>try:</b> <code>verify=no</code> (U-Boot env)" in html
    assert "<b>no knob:</b> rebuild the kernel image uncompressed" in html
    (lpj,) = [a for a in report.advisories if a.rule == "calibrate_delay"]
    tags, fields = advisory_point(lpj)
    assert tags == {"rule": "calibrate_delay"}  # the series stays the rule's
    assert fields["knob_kind"] == "kernel_arg" and fields["knob_op"] == "set"
    assert fields["knob_name"] == "lpj" and fields["knob_value"] == "1495040"
    (dec,) = [a for a in report.advisories if a.rule == "kernel_decompress"]
    assert {k: v for k, v in advisory_point(dec)[1].items() if k.startswith("knob")} == {
        "knob_kind": "none"
    }
