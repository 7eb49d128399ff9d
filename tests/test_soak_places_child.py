"""`rig soak --places` reads each child's `rig soak --json` as a typed summary, and hands
it on unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from rig.commands.common import fmt_ms
from rig.errors import MAX_MESSAGE
from rig.model.summary import SoakSummary
from rig.soak.command import _table
from rig.soak.places import PlaceSoak, _collect

#: What `rig soak --resume --json` printed for the simulated soak (its clock-dependent
#: values normalised by the goldens, given back numbers here).
CHILD = Path(__file__).parent / "data" / "golden" / "soak" / "resume-json.stdout"


def _child(out: str, code: int) -> PlaceSoak:
    """A child process that prints `out` and exits with `code`, read to its end."""
    program = f"import sys; sys.stdout.write({out!r}); sys.exit({code})"
    proc = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE)
    err = tempfile.TemporaryFile()  # noqa: SIM115 - _collect closes it
    p = PlaceSoak("b1", Path("b1.toml"), "night-b1", proc, err, Path("j"))
    _collect(p)
    return p


def test_a_childs_summary_is_typed_and_handed_on_unchanged() -> None:
    text = CHILD.read_text(encoding="utf-8")
    text = text.replace('"<utc>"', '"2026-11-28T05:00:00Z"').replace('"<elapsed>"', "12.5")
    p = _child(text, 1)
    assert isinstance(p.summary, SoakSummary) and p.error is None
    assert p.summary.cycles.run == 6 and p.summary.power_to_ui.p50 is not None
    # `rig soak --places --json` prints the child's summary as the child wrote it.
    assert json.dumps(p.as_json()["soak"], indent=2) + "\n" == text
    console = Console(width=120, record=True)
    console.print(_table([p]))
    row = next(ln for ln in console.export_text().splitlines() if "night-b1" in ln)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells == ["b1", "night-b1", "6", "33.33%", fmt_ms(p.summary.power_to_ui.p50), "1"]


def test_a_summary_that_does_not_fit_is_the_places_error() -> None:
    p = _child(json.dumps({"soak_id": "night-b1", "cycles": 3}), 1)
    assert p.summary is None
    assert p.error is not None and "its summary does not fit" in p.error


def test_a_crashed_childs_output_is_bounded_like_every_message() -> None:
    """A child that ends without its JSON: its output is the error, cut by `bounded`
    (with how much was cut), not by hand."""
    p = _child("x" * (MAX_MESSAGE + 3000), 7)
    assert p.summary is None and p.exit_code == 7
    assert p.error == "x" * MAX_MESSAGE + "… (3000 more characters)"
