"""How long `rig --help` takes to answer: the wall time of the real `rig` executable,
start to exit, over N runs (issue 22, item 5: it took 2.7 s when every command and its
numpy, scipy and plotly loaded first; a CLI answers --help in well under half a second).

Also timed, for the record: `rig --version`, a few `rig <command> --help`, and the bare
interpreter (`python -c pass`, the floor no command goes below). The host's load average
is printed beside them: on a shared host the figures move with it.

The result line: the medians and spreads, the reference (the 0.5 s target), the ratio
median(`rig --help`) / 0.5 s and "target_met" (that median under 0.5 s).

    python bench/cli_startup.py [--runs N] [--rig PATH]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness.result import result, timed

TARGET_S = 0.5
COMMANDS = {
    "rig --help": ["--help"],
    "rig --version": ["--version"],
    "rig run --help": ["run", "--help"],
    "rig analyze --help": ["analyze", "--help"],
    "rig compare --help": ["compare", "--help"],
}


def timed_cmd(cmd: list[str], runs: int) -> dict[str, float]:
    # once untimed first: the page cache and .pyc files, as on a second call
    null = subprocess.DEVNULL
    t, _ = timed(lambda: subprocess.run(cmd, stdout=null, stderr=null, check=True), runs, 1)
    return {
        "median_s": round(t.median_s, 4),
        "min_s": round(t.min_s, 4),
        "max_s": round(t.max_s, 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--rig", type=Path, default=Path(sys.executable).with_name("rig"))
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    python = timed_cmd([sys.executable, "-c", "pass"], args.runs)
    figures = {
        name: timed_cmd([str(args.rig), *argv], args.runs) for name, argv in COMMANDS.items()
    }
    load_after = os.getloadavg()[0]
    print(f"{'python -c pass':22} median {python['median_s']:.3f} s")
    for name, f in figures.items():
        print(
            f"{name:22} median {f['median_s']:.3f} s "
            f"(min {f['min_s']:.3f}, max {f['max_s']:.3f}; {args.runs} runs)"
        )
    print(f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after")
    median = figures["rig --help"]["median_s"]
    result(
        "cli_startup",
        runs=args.runs,
        figures=figures,
        python_start=python,
        load_avg_1m=[round(load_before, 2), round(load_after, 2)],
        reference={
            "target_s": TARGET_S,
            "what": "median wall time of `rig --help` under 0.5 s (issue 22, item 5)",
        },
        ratio=round(median / TARGET_S, 3),
        target_met=median < TARGET_S,
    )


if __name__ == "__main__":
    main()
