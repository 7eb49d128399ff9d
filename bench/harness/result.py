"""What every bench shares: its last line, its clocks and the rig as a process.

A bench prints as its last line one JSON object with its figures, the reference they
are held to, the ratio against it and "target_met": `result` prints it (no bench
prints its own), `skipped` when the bench could not measure. `timed` and `Stopwatch`
time, `rig_json` runs the real `rig` in a process of its own and reads its --json
answer, `spread` summarises errors.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import numpy as np

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def result(
    bench: str, *, reference: Any, ratio: Any, target_met: bool, **figures: Any
) -> dict[str, Any]:
    """Print the bench's last line: its name, figures (in the order given), the reference,
    the ratio and whether the target is met. Returns what it printed."""
    line = {
        "bench": bench,
        **figures,
        "reference": reference,
        "ratio": ratio,
        "target_met": bool(target_met),
    }
    print(json.dumps(line), flush=True)
    return line


def skipped(bench: str, why: str, reference: Any) -> dict[str, Any]:
    """The last line of a bench that measured nothing (a missing tool or image)."""
    print(why, file=sys.stderr)
    return result(bench, skipped=why, reference=reference, ratio=None, target_met=False)


@dataclass
class Timing:
    runs: int
    median_s: float
    min_s: float
    max_s: float


def timed(fn: Callable[[], T], runs: int = 1, warmup: int = 0) -> tuple[Timing, T]:
    """Wall time of `runs` calls of `fn` after `warmup` untimed ones, and the last result."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(max(1, runs)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return Timing(len(times), statistics.median(times), min(times), max(times)), out


class Stopwatch:
    """`with Stopwatch() as sw: ...`; then `sw.s` is the wall time of the block (while
    inside it, the time so far)."""

    def __enter__(self) -> Stopwatch:
        self._t0 = time.perf_counter()
        self._end: float | None = None
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._end = time.perf_counter()

    @property
    def s(self) -> float:
        end = self._end if self._end is not None else time.perf_counter()
        return end - self._t0


def rig_json(*args: str, timeout: float, codes: Sequence[int] = (0,)) -> dict[str, Any]:
    """`rig ARGS` (add --json yourself) in a process of its own from the repository: its
    JSON answer. Another exit code than `codes` ends the bench, naming the command."""
    cmd = [sys.executable, "-m", "rig", *args]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    if proc.returncode not in codes:
        tail = (proc.stderr or proc.stdout)[-2000:]
        raise SystemExit(f"rig {' '.join(args)}: exit {proc.returncode}: {tail}")
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def percentile(values: Sequence[float], q: float) -> float:
    """numpy's percentile (linear between the closest ranks), as the rig's statistics."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


_UNITS = {"s": 1.0, "ms": 1e3, "us": 1e6}


def spread(values_s: Sequence[float], unit: str) -> dict[str, float]:
    """n, p50, p99 and max of `values_s` (seconds) in `unit` (s, ms, us): keys `p50_us` ..."""
    k = _UNITS[unit]
    return {
        "n": len(values_s),
        f"p50_{unit}": percentile(values_s, 50) * k,
        f"p99_{unit}": percentile(values_s, 99) * k,
        f"max_{unit}": max(values_s) * k,
    }
