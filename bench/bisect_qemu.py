"""`rig bisect` on the QEMU target, end to end: how many boots a step takes and how long
the whole search takes, on the repository `make bisect-repo` makes (linux-source-6.1 with
our hooks and eight small commits: 30 ms added to ext4_init_fs, 0.3 ms earlier to
virtio_mmio_init), each commit's kernel built incrementally by bisect-build.sh.

Runs `rig bisect --json` (tests/bisect_env.py's QEMU_BISECT_ARGS: ext4_init_fs's own
duration under initcall_debug, 6 boots an end, batches of 5, at most 10 a step; extra
arguments are passed on and win) as its own process and reads its answer: the commits
and steps, the boots of each step (its own and the ends' booted beside it), the ends'
boots, every build's seconds (from the step's build.log), the wall time, and whether the
commit named is the 30 ms one. The host's load (1 min) before and after goes with it:
QEMU's TCG stretches with a busy host (the kernel's clock in an initcall far less).

(Not bench/bisect.py, as issue 24 names it: a bench named like a standard module is
imported in its place by every other bench; tests/test_bench_harness.py.)

Target (issue 24): the right commit named with fewer than 40 boots a step on average,
counting the ends' boots beside each step with its own (the step's cost); `ratio` =
boots a step / 40. The step's own boots alone are `own_boots_per_step`.

    python bench/bisect_qemu.py [--keep DIR] [ARGS for rig bisect ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import Stopwatch, result, skipped  # noqa: E402
from tests.bisect_env import qemu_bisect_argv, qemu_bisect_repo  # noqa: E402
from tests.qemu_env import qemu_config  # noqa: E402

BOOTS_PER_STEP_MAX = 40
REFERENCE = {"boots_per_step_max": BOOTS_PER_STEP_MAX, "named": "the 30 ms commit"}
_BUILT = re.compile(r"^# ok after ([0-9.]+) s$", re.M)


def build_seconds(folder: Path, doc: dict[str, Any]) -> dict[str, float]:
    """Each built commit's build time (rig bisect's own line in its build.log)."""
    out = {}
    for s in doc["steps"]:
        log = folder / "steps" / f"{s['index']:03d}-{s['commit'][:10]}" / "build.log"
        m = _BUILT.search(log.read_text()) if log.is_file() else None
        if m:
            out[s["commit"][:12]] = float(m.group(1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, help="Keep the bisect's folder here.")
    args, extra = ap.parse_known_args()
    made = qemu_bisect_repo()
    if isinstance(made, str):
        skipped("bisect", made, REFERENCE)
        return
    with tempfile.TemporaryDirectory(prefix="bench-bisect-") as tmp:
        base = args.keep or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        out = base / "bisect"
        argv = qemu_bisect_argv(made, qemu_config(base), out, *extra, "--json")
        load_before = os.getloadavg()[0]
        with Stopwatch() as sw:
            proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=7200)
        load_after = os.getloadavg()[0]
        if not proc.stdout:
            raise SystemExit(f"rig bisect: exit {proc.returncode}: {proc.stderr[-2000:]}")
        doc = json.loads(proc.stdout)
        builds = build_seconds(out, doc)
    steps = [s for s in doc["steps"] if s["role"] == "step"]
    own = [s["boots"] + len(s["failed"]) for s in steps]
    beside = [sum(s["reference_boots"].values()) for s in steps]
    per_step = [a + b for a, b in zip(own, beside, strict=True)]
    ends = sum(s["boots"] + len(s["failed"]) for s in doc["steps"] if s["role"] != "step")
    mean = sum(per_step) / len(per_step) if per_step else None
    culprit = made.manifest["commits"][made.culprit]["commit"]
    named = (doc.get("first_bad") or {}).get("commit")
    correct = named == culprit
    detectable = (doc["ends"] or {}).get("detectable_s")
    difference = (doc["difference"] or {}).get("difference_s")
    result(
        "bisect",
        exit_code=proc.returncode,
        status=doc["status"],
        commits=doc["commits"],
        steps=len(steps),
        boots_per_step=per_step,
        own_boots_per_step=own,
        boots_per_step_mean=mean,
        end_boots=ends,
        boots=ends + sum(per_step),
        wall_s=round(sw.s, 1),
        build_s=builds,
        detectable_ms=None if detectable is None else round(detectable * 1e3, 2),
        difference_ms=None if difference is None else round(difference * 1e3, 2),
        named=named,
        named_correct=correct,
        load1=[round(load_before, 2), round(load_after, 2)],
        reference=REFERENCE,
        ratio=None if mean is None else round(mean / BOOTS_PER_STEP_MAX, 3),
        target_met=correct and mean is not None and mean < BOOTS_PER_STEP_MAX,
    )


if __name__ == "__main__":
    main()
