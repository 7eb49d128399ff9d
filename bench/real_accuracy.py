"""Accuracy of the rig's stage boundaries on the real QEMU target, against QEMU's trace.

Per target (`--target`, default every one in TARGETS): boots its hooked QEMU config
(real U-Boot 2023.01 and our hooked kernel: config/qemu-arm64.toml for Linux 6.1,
config/qemu-arm64-6.12.toml for 6.12, config/qemu-armv7.toml for 6.1 on 32-bit ARM) N
times console-only and N times with the capture, and its stock variant (Debian's kernel,
no hooks: landmarks stand in for its markers, config/qemu-arm64-stock*.toml) the same way
when its images are built. `--config PATH` adds a target of its own (named after the
file, hooked only): a new board's config is measured by running this with it. Every run
keeps QEMU's own trace of the GPIO writes; `report_edges` turns it into the true marker
times on the report's clock, and each stage boundary the analysis put on a traced marker
is compared with it. A console-only run's t = 0 is the power-on command, which QEMU's
RESUME follows by a lag (`resume_lag_ms`): the truth is counted from the command there,
as the report is, not from the RESUME (that lag is the power event's to state).

Printed per target and boundary source (gpio, uart, printk, host, landmark): p50/p99/max
error and how often it exceeded the stated uncertainty; the last line has the figures of
all boots and of each target (`targets`), each with its ratio and target_met. Targets:
host-timed boundaries within 20 ms and inside their stated uncertainty in at least 99 %
of boots; every other source (landmarks included) inside its stated uncertainty in every
boot, for each target and for all together.

QEMU's PL011 is not paced (bytes arrive at once), so this bench checks the console
model on an unpaced console with a kernel backlog; bench/accuracy.py checks it on the
simulator's paced one. Runs the boots one after another; do not run it beside the test
suite (both need the CPU for timing).

    python bench/real_accuracy.py [--target NAME]... [--config PATH]... [--boots N]
        [--stock-boots N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.harness.result import percentile, result, spread  # noqa: E402
from rig.config.load import RigConfig  # noqa: E402
from rig.instruments.drivers import driver_specs, load_config  # noqa: E402
from rig.instruments.qemu.reference import command_lag_s, report_edges  # noqa: E402
from rig.instruments.setup import Instruments  # noqa: E402
from rig.measure.cycle import run_cycle  # noqa: E402
from rig.measure.pipeline import analyze_folder  # noqa: E402
from rig.sinks.files import save_report  # noqa: E402

CONFIG = REPO / "config"
#: target -> (hooked config, stock config or None): a target is one kernel on one board.
TARGETS: dict[str, tuple[Path, Path | None]] = {
    "linux-6.1-arm64": (CONFIG / "qemu-arm64.toml", CONFIG / "qemu-arm64-stock.toml"),
    "linux-6.12-arm64": (CONFIG / "qemu-arm64-6.12.toml", CONFIG / "qemu-arm64-stock-6.12.toml"),
    # 32-bit ARM: our hooked 6.1 for armhf; no stock variant (landmarks: the recorded
    # armv7-* boots with their hooks taken out, tests/test_real_hookless.py).
    "linux-6.1-armv7": (CONFIG / "qemu-armv7.toml", None),
}
HOST_LIMIT_S = 20e-3
HOST_BOOTS = 0.99  # fraction of boots whose host-timed boundaries must all hold
SOURCES = ("gpio", "uart", "printk", "host", "landmark")

Row = dict[str, Any]


def built(cfg: RigConfig) -> bool:
    """The images exist (the build script's --dir answers without building)."""
    qemu = driver_specs(cfg).qemu
    assert qemu is not None
    script = qemu.build_script
    p = subprocess.run(["bash", str(script), "--dir"], capture_output=True, check=False)
    return p.returncode == 0


def variant(path: Path, console_only: bool, results: Path) -> RigConfig:
    cfg = load_config(path, overrides=['analyzer.driver="none"'] if console_only else ())
    return dataclasses.replace(cfg, results_dir=results)


def boundaries(report: dict[str, Any], truth: dict[str, float]) -> list[Row]:
    """Each traced marker a stage boundary stands on, once, with its error."""
    seen: dict[str, Row] = {}
    for stage in report["stages"]:
        for side in ("start", "end"):
            b, t = stage[side], stage[f"{side}_s"]
            if b is None or t is None or b["event"] not in truth or b["event"] in seen:
                continue
            seen[b["event"]] = {
                "marker": b["event"],
                "source": b["source"],
                "error_s": t - truth[b["event"]],
                "uncertainty_s": b["uncertainty_s"],
            }
    return list(seen.values())


def run_mode(
    cfg: RigConfig,
    mode: str,
    boots: int,
    rows: list[Row],
    lags: list[float],
    keep: Path | None,
    outcomes: Counter[tuple[str, str]],
) -> None:
    """`mode`: `<target>/<hooked|stock>-<console|capture>`; `outcomes` counts each
    target's report outcomes (a boundary of a boot that is not `ok` still counts)."""
    console_only = driver_specs(cfg).analyzer.name == "none"
    with Instruments(cfg) as bench:
        for k in range(boots):
            res = run_cycle(cfg, bench)
            analyzed = analyze_folder(res.folder)
            save_report(res.folder, analyzed)  # kept with the artifacts below
            report = analyzed.to_json()
            truth = report_edges(res.folder, console_only)
            lag = command_lag_s(res.folder)
            if console_only and lag is not None:
                lags.append(lag * 1e3)
            mine = boundaries(report, truth)
            target = mode.split("/")[0]
            outcomes[target, report["outcome"]] += 1
            rows += [{**r, "mode": mode, "target": target, "boot": f"{mode}-{k}"} for r in mine]
            missed = [r for r in mine if abs(r["error_s"]) > r["uncertainty_s"]]
            if keep is not None and missed:  # the artifacts, to see why
                dst = keep / f"{mode.replace('/', '-')}-{k}"
                shutil.copytree(res.folder, dst, dirs_exist_ok=True)
            pacing = (report["clocks"]["host"].get("pacing") or {}).get("verdict")
            lag_ms = f"{lag * 1e3:.3f}" if lag is not None else "?"
            print(
                f"{mode} boot {k}: {report['outcome']}, console {pacing}, RESUME {lag_ms} ms "
                "after the command",
                file=sys.stderr,
            )


def figures(rows: list[Row]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for src in SOURCES:
        mine = [r for r in rows if r["source"] == src]
        if not mine:
            continue
        errs = [abs(r["error_s"]) for r in mine]
        over = [r for r in mine if abs(r["error_s"]) > r["uncertainty_s"]]
        boots = {r["boot"] for r in mine}
        bad = {r["boot"] for r in over}
        if src == "host":
            bad |= {r["boot"] for r in mine if abs(r["error_s"]) > HOST_LIMIT_S}
        out[src] = {
            **spread(errs, "ms"),
            "exceeded": len(over),
            "exceeded_fraction": len(over) / len(mine),
            "boots": len(boots),
            "boots_ok_fraction": 1 - len(bad) / len(boots),
            "markers": sorted({r["marker"] for r in mine}),
        }
    return out


def signed_by_marker(rows: list[Row]) -> dict[str, Any]:
    """Signed errors (ms) per mode, source and marker: how far each hook's print path
    and the power-on command sit from the traced edge."""
    out: dict[str, Any] = {}
    for r in rows:
        out.setdefault(f"{r['mode']}/{r['source']}/{r['marker']}", []).append(r["error_s"] * 1e3)
    return {k: {"min": min(v), "median": percentile(v, 50), "max": max(v)} for k, v in out.items()}


def verdict(rows: list[Row]) -> dict[str, Any]:
    """Figures, ratio and target_met of some boots (one target's or all)."""
    figs = figures(rows)
    host = figs.get("host")
    strict = [f for s, f in figs.items() if s != "host"]
    ratio = {
        "host_p99_over_limit": host["p99_ms"] / (HOST_LIMIT_S * 1e3) if host else None,
        "host_boots_ok_over_target": host["boots_ok_fraction"] / HOST_BOOTS if host else None,
        "beyond_uncertainty": {s: f["exceeded_fraction"] for s, f in figs.items()},
    }
    met = (
        host is not None
        and host["boots_ok_fraction"] >= HOST_BOOTS
        and all(f["exceeded"] == 0 for f in strict)
    )
    return {
        "boots": len({r["boot"] for r in rows}),
        "errors": figs,
        "ratio": ratio,
        "target_met": met,
    }


def print_table(name: str, figs: dict[str, Any]) -> None:
    print(f"{name}:")
    print(
        f"  {'source':9s} {'n':>4s} {'p50':>9s} {'p99':>9s} {'max':>9s}  (ms)  beyond u  boots ok"
    )
    for src, f in figs.items():
        print(
            f"  {src:9s} {f['n']:4d} {f['p50_ms']:9.3f} {f['p99_ms']:9.3f} {f['max_ms']:9.3f}"
            f"  {f['exceeded']:8d}  {f['boots_ok_fraction']:8.3f}"
        )


def plan_targets(
    names: list[str], configs: list[Path], boots: int, stock_boots: int
) -> list[tuple[Path, str, int]]:
    """(config, mode prefix `<target>/<kind>`, boots) for each target asked for."""
    targets = {n: TARGETS[n] for n in names} if names or configs else dict(TARGETS)
    targets |= {p.stem: (p, None) for p in configs}
    plan: list[tuple[Path, str, int]] = []
    for name, (hooked, stock) in targets.items():
        plan.append((hooked, f"{name}/hooked", boots))
        if stock is None or stock_boots <= 0:
            continue
        if built(load_config(stock)):
            plan.append((stock, f"{name}/stock", stock_boots))
        else:
            print(f"{name}: stock images not built: no landmark boundaries", file=sys.stderr)
    return plan


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", action="append", default=[], choices=sorted(TARGETS))
    ap.add_argument("--config", action="append", default=[], type=Path, help="another target")
    ap.add_argument("--boots", type=int, default=20, help="per mode of a hooked target")
    ap.add_argument("--stock-boots", type=int, default=5, help="per mode of a stock one")
    ap.add_argument("--keep", type=Path, help="copy the artifacts of boots that missed here")
    args = ap.parse_args()
    rows: list[Row] = []
    lags: list[float] = []
    outcomes: Counter[tuple[str, str]] = Counter()
    started = time.monotonic()
    plan = plan_targets(args.target, args.config, args.boots, args.stock_boots)
    with tempfile.TemporaryDirectory() as tmpd:
        results = Path(tmpd)
        for path, prefix, boots in plan:
            for console_only in (True, False):
                mode = f"{prefix}-{'console' if console_only else 'capture'}"
                cfg = variant(path, console_only, results)
                run_mode(cfg, mode, boots, rows, lags, args.keep, outcomes)
    per_target = {
        t: verdict([r for r in rows if r["target"] == t])
        for t in dict.fromkeys(p.split("/")[0] for _, p, _ in plan)
    }
    for t, v in per_target.items():
        print_table(t, v["errors"])
    overall = verdict(rows)
    result(
        "real_accuracy",
        boots=overall["boots"],
        seconds=time.monotonic() - started,
        errors=overall["errors"],
        outcomes=dict(sorted(Counter(o for (_, o) in outcomes.elements()).items())),
        targets={
            t: {
                **v,
                "outcomes": {o: n for (tt, o), n in sorted(outcomes.items()) if tt == t},
                "configs": [
                    str(c.relative_to(REPO)) if c.is_relative_to(REPO) else str(c)
                    for c, p, _ in plan
                    if p.startswith(f"{t}/")
                ],
            }
            for t, v in per_target.items()
        },
        signed_ms=signed_by_marker(rows),
        resume_lag_ms={"min": min(lags), "median": percentile(lags, 50), "max": max(lags)}
        if lags
        else None,
        reference={
            "truth": "QEMU pl061_set_output trace (qemu-trace.log), t = 0 at QMP RESUME "
            "(capture) or at the power-on command (console-only)",
            "targets": {
                "host": f"|error| <= {HOST_LIMIT_S * 1e3:g} ms and <= uncertainty "
                f"in >= {HOST_BOOTS:.0%} of boots",
                "others": "|error| <= uncertainty in every boot",
            },
        },
        ratio=overall["ratio"],
        target_met=overall["target_met"] and all(v["target_met"] for v in per_target.values()),
    )


if __name__ == "__main__":
    main()
