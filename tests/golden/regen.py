"""Regenerate tests/data/golden/ on purpose: `python -m tests.golden.regen [CASE...]`.

tests/test_golden_outputs.py checks that reports, report.html and comparison pages,
terminal and `--json` output, the soak's summary, page and InfluxDB line protocol and the
Grafana dashboards come out byte for byte as the goldens say (tests/golden/outputs.py
lists the commands and the few normalised fields). When an output changes on purpose,
run this from the repository root with the venv's Python, look at `git diff
tests/data/golden`, and say in the commit which outputs changed and why. Never regenerate
to make the test pass after a change that was meant to keep the outputs.

The goldens were first made by the code at commit c525b0b (before the issue 23 redesign),
from a worktree of it, so that they hold the "before":

    git worktree add /tmp/golden-base c525b0b
    PYTHONPATH=/tmp/golden-base .venv/bin/python -m tests.golden.regen
    git worktree remove /tmp/golden-base

(`rig` is installed editable from this checkout; PYTHONPATH puts the worktree's `rig`
first, and this script prints which one the commands ran.) It generates every case twice
in fresh folders and writes nothing when the two differ: an output that differs between
two runs of the same code must be normalised (and listed in outputs.py) or fixed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.golden.outputs import CASES, GOLDEN, REPO, generate


def _which_rig() -> str:
    p = subprocess.run(
        [sys.executable, "-c", "import rig; print(rig.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
        env=os.environ,
    )
    return p.stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", metavar="CASE", help=f"of {', '.join(CASES)} (default all)")
    args = ap.parse_args()
    if unknown := set(args.cases) - set(CASES):
        ap.error(f"no case {', '.join(sorted(unknown))}")
    print(f"rig from {_which_rig()}")
    for case in args.cases or list(CASES):
        runs = []
        for _ in range(2):
            with tempfile.TemporaryDirectory(prefix=f"golden-{case}-") as tmp:
                out, clash = generate(case, Path(tmp)).merged()
            if clash:
                print(f"{case}: written twice with different bytes: {', '.join(clash)}")
                return 1
            runs.append(out)
        differ = sorted(k for k in runs[0].keys() | runs[1].keys()
                        if runs[0].get(k) != runs[1].get(k))  # fmt: skip
        if differ:
            print(f"{case}: differs between two runs, not written: {', '.join(differ)}")
            return 1
        shutil.rmtree(GOLDEN / case, ignore_errors=True)
        for key, data in runs[0].items():
            path = GOLDEN / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        size = sum(len(v) for v in runs[0].values())
        print(f"{case}: {len(runs[0])} files, {size / 1024:.0f} kB in {GOLDEN.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
