"""Capture analysis throughput: the fast engine against the sigrok-cli stacks.

Renders (with the simulated board, in a temporary folder deleted afterwards) a 20 s,
24 MHz, 8-channel capture of the Ecovec baseline boot: relay bounce on `power`, the
four marker GPIOs and the 115200-baud console on `uart_tx`. Then times

- sigrok: `scan_markers` (sigrok-cli + bootmarkers) plus sigrok-cli's own `uart`
  decoder on the same capture (what the rig would need sigrok for);
- fast: `scan_capture` (one streaming pass: markers and the UART tap),

checks both give identical results, and prints MS/s (million samples per second) of
each. Target: fast >= 500 MS/s and >= 15x the sigrok stacks.

    python bench/analysis_throughput.py [--seconds 20] [--rate 24000000] [--runs 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import Stopwatch, result, timed  # noqa: E402
from rig.artifacts.decode import scan_markers  # noqa: E402
from rig.artifacts.fastscan import scan_capture  # noqa: E402
from rig.artifacts.srzip import write_sr  # noqa: E402
from simboard.board import Board  # noqa: E402
from simboard.capture import Arming, blocks, sample_count  # noqa: E402
from simboard.timeline import load  # noqa: E402

MIN_MSPS = 500.0
MIN_RATIO = 15.0
BAUD = 115200
WIRING = {"power": 0, "bootm": 1, "do_mount_root": 2, "kernel_init": 3, "ui_ready": 4, "uart_tx": 5}
NAMES = [*WIRING, "D6", "D7"]  # 8 channels; two probes unconnected
T0 = 10**12


def render(path: Path, seconds: float, rate: int) -> tuple[int, int]:
    """The capture; returns (samples, console bytes on the wire)."""
    board = Board(
        load(REPO / "config" / "boards" / "ecovec-baseline.toml"),
        1,
        False,
        lambda _k, _p: None,
        start_ns=T0 - 10**9,
    )
    board.frame(1, 1, T0 + 100_000_000)  # power on 0.1 s after arming
    arming = Arming(T0, rate, WIRING)
    n = sample_count(arming, T0 + round(seconds * 1e9)) - 1
    write_sr(path, NAMES, rate, blocks(board.snapshot(T0), arming, n))
    return n, len(board.boots[0].timeline.data)


def sigrok_uart(capture: Path) -> list[tuple[int, int, int]]:
    cmd = ["sigrok-cli", "-i", str(capture), "-P", f"uart:baudrate={BAUD}:rx=uart_tx"]
    cmd += ["-A", "uart=rx-data", "--protocol-decoder-samplenum"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        span, _, text = line.partition(" uart-1: ")
        ss, es = span.split("-")
        rows.append((int(ss), int(es), int(text, 16)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--rate", type=int, default=24_000_000)
    ap.add_argument("--runs", type=int, default=5, help="fast engine runs (median)")
    ap.add_argument("--sigrok-runs", type=int, default=1)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="bootrig-bench-") as d:
        cap = Path(d) / "capture.sr"
        with Stopwatch() as sw:
            n, sent = render(cap, args.seconds, args.rate)
        print(f"rendered {n:,} samples ({sent:,} console bytes) in {sw.s:.1f} s")
        mark, ref = timed(lambda: scan_markers(cap), args.sigrok_runs)
        uart_, ref_uart = timed(lambda: sigrok_uart(cap), args.sigrok_runs)
        fast, got = timed(lambda: scan_capture(cap, baud=BAUD), args.runs)
        detect, auto = timed(lambda: scan_capture(cap), 1)
    t_mark, t_uart, t_fast, t_detect = (t.median_s for t in (mark, uart_, fast, detect))

    uart = got.uart
    rows = list(zip(uart.ss.tolist(), uart.es.tolist(), uart.data, strict=True)) if uart else []
    identical = (
        dataclasses.replace(got.markers, engine="sigrok") == ref
        and rows == ref_uart
        and auto.uart is not None
        and auto.uart.baud == BAUD
        and auto.uart.data == bytes(r[2] for r in rows)
    )
    msps = {
        "sigrok_markers": n / t_mark / 1e6,
        "sigrok_uart": n / t_uart / 1e6,
        "sigrok": n / (t_mark + t_uart) / 1e6,
        "fast": n / t_fast / 1e6,
        "fast_baud_detect": n / t_detect / 1e6,
    }
    ratio = msps["fast"] / msps["sigrok"]
    print(f"{'engine':<34}{'seconds':>10}{'MS/s':>10}")
    rows_out = [
        ("sigrok-cli + bootmarkers", t_mark, msps["sigrok_markers"]),
        ("sigrok-cli uart", t_uart, msps["sigrok_uart"]),
        ("sigrok stacks (both)", t_mark + t_uart, msps["sigrok"]),
        (f"fast (markers + uart, median of {args.runs})", t_fast, msps["fast"]),
        ("fast, baud detected", t_detect, msps["fast_baud_detect"]),
    ]
    for name, secs, rate in rows_out:
        print(f"{name:<34}{secs:>10.3f}{rate:>10.1f}")
    print(f"ratio fast / sigrok: {ratio:.1f}x; identical results: {identical}")
    result(
        "analysis_throughput",
        samples=n,
        samplerate_hz=args.rate,
        console_bytes=len(uart.data) if uart else 0,
        msps={k: round(v, 1) for k, v in msps.items()},
        # the simulated analyzer's rendering, .sr packing included: how long a simulated
        # soak's captures take (tests check its samples, not its speed)
        sim_render_msps=round(n / sw.s / 1e6, 1),
        targets={"min_msps": MIN_MSPS, "min_ratio": MIN_RATIO},
        identical=identical,
        reference="sigrok-cli 0.7.2 (libsigrokdecode 0.5.3): bootmarkers + uart decoders",
        ratio=round(ratio, 1),
        target_met=identical and msps["fast"] >= MIN_MSPS and ratio >= MIN_RATIO,
    )


if __name__ == "__main__":
    main()
