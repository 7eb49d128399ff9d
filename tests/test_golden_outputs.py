"""Reports, report.html and comparison pages, terminal and `--json` output, the soak's
summary, page and InfluxDB line protocol, and the Grafana dashboards stay byte for byte
what the goldens in tests/data/golden/ say (issue 23: a redesign keeps every output).

The goldens were made by the code before the redesign (commit c525b0b) from the recorded
real boots (tests/data/real) and a recorded simulated soak (tests/data/sim-soak). Every
command runs through the command line (`python -m rig`), so modules may move freely.
tests/golden/outputs.py lists the commands and the only normalised fields, with why;
tests/golden/regen.py regenerates the goldens when an output changes on purpose.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.outputs import CASES, compare, generate


@pytest.mark.parametrize("case", list(CASES))
def test_outputs_match_goldens(case: str, tmp_path: Path) -> None:
    problems = compare(case, generate(case, tmp_path))
    if problems:
        pytest.fail(
            f"{len(problems)} output(s) of case {case!r} differ from tests/data/golden "
            "(regenerate only for a change meant to alter them: tests/golden/regen.py):\n"
            + "\n".join(problems[:20]),
            pytrace=False,
        )
