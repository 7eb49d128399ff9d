"""`rig cost`: what the instrumentation itself costs each stage of the boot, measured
with interleaved on/off boots through config variants (docs/cost.md).

Exit code: 0 measured (whatever the costs), 1 a variant had no boot that counts (the
board failed), 2 bad input (a variant's syntax or key), 3 the rig failed, 130/143
interrupted."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from rig.analysis.choices import BONFERRONI, CORRECTIONS, OFF, ON, ORDERS, VARIANTS
from rig.artifacts import rundir
from rig.artifacts.rundir import probe_results_dir
from rig.commands.common import (
    config_option,
    console,
    emit_json,
    engine_option,
    fail,
    fmt_ms,
    fmt_p,
    json_option,
    recover_leftovers,
    spinner,
)
from rig.compare.command import print_notes, verdict_table
from rig.compare.inputs import stage_names
from rig.errors import EXIT_BOARD_FAILED, EXIT_OK
from rig.soak.signals import StopFlag

if TYPE_CHECKING:
    from rig.compare.stats import Settings, StageComparison
    from rig.cost.run import CostRun

_STYLE = {"costs": "bold red", "saves": "bold green", "no_cost": "dim"}


def print_costs(doc: dict[str, Any], costs: list[StageComparison]) -> None:
    from rig.cost.stats import verdict

    each = f"{costs[0].confidence:.1%}" if costs else ""
    t = verdict_table(
        f"cost = on - off (ms), {1 - doc['alpha']:.0%} confidence overall ({each} each)",
        ("stage", "off", "on", "cost", "CI low", "CI high", "p", "verdict"),
    )
    for c in costs:
        t.add_row(
            c.name, fmt_ms(c.median_before_s), fmt_ms(c.median_after_s),
            fmt_ms(c.difference_s, True), fmt_ms(c.ci_low_s, True), fmt_ms(c.ci_high_s, True),
            fmt_p(c.p_value), f"[{_STYLE[verdict(c)]}]{verdict(c)}[/]",
        )  # fmt: skip
    console.print(t)
    for v in VARIANTS:
        info = doc["variants"][v]
        sets = ", ".join(info["overrides"]) or "the config as it is"
        line = f"{v}: {escape(sets)}: {info['boots']} boot(s) count"
        if info["excluded"]:
            line += "; excluded: " + escape(", ".join(f"{b} ({r})" for b, r in info["excluded"]))
        console.print(line, highlight=False)
    b = doc["bench"]
    starts = ", ".join(f"{s['variant']} {s['s']:.1f} s" for s in b["starts"])
    how = "both open throughout" if b["concurrent"] else "one at a time, restarted"
    console.print(
        f"pairs: {doc['pairs']}, order {doc['order']} (seed {doc['seed']}), warm-up "
        f"{doc['warmup']} a variant; benches {how}: {starts}; {doc['wall_s']:.1f} s",
        highlight=False,
    )
    print_notes(costs)
    console.print(f"boots: [bold]{escape(doc['folder'])}[/]", highlight=False)


def cost_doc(
    run: CostRun,
    costs: list[StageComparison],
    variants: dict[str, Any],
    settings: Settings,
    args: dict[str, Any],
) -> dict[str, Any]:
    from rig.cost.stats import cost_json

    sides = {v: run.sides[v].sources[0] for v in VARIANTS}
    return {
        "stages": [cost_json(c) for c in costs],
        "pairs": args["pairs"],
        "variants": {
            v: {
                **variants[v].to_json(),
                "boots": len(sides[v].boots),
                "warmup": [b.id for b in sides[v].warmup],
                "excluded": [[i, r] for i, r in sides[v].excluded],
            }
            for v in VARIANTS
        },
        "order": args["order"],
        "seed": args["seed"],
        "sequence": [b.run_id for b in run.boots],
        "warmup": args["warmup"],
        "alpha": settings.alpha,
        "correction": args["correction"],
        "folder": str(run.folder),
        "bench": {"concurrent": run.concurrent, "starts": run.bench_starts},
        "wall_s": round(run.wall_s, 3),
        "interrupted": run.interrupted,
    }


@click.command()
@config_option()
@click.option(
    "--variant",
    "variant_texts",
    multiple=True,
    metavar="on|off:KEY=VALUE[,KEY=VALUE]",
    help="A variant: its name (on: instrumentation on, off: off), then config overrides as "
    "--set takes them, e.g. on:'qemu.kernel_args=\"initcall_debug loglevel=8\"' or "
    "off:sim.quiet=true. Give both.",
)
@click.option(
    "--set",
    "common",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a config key for both variants (before each variant's own), e.g. "
    "--set timeouts.boot_s=20.",
)
@click.option("--pairs", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--order", type=click.Choice(ORDERS), default="random", show_default=True,
              help="Boot order (docs/cost.md): random blocks of on-off-off-on / off-on-on-off "
              "(seeded), abba, or abab.")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --order random.")
@click.option("--warmup", type=click.IntRange(min=0), default=1, show_default=True,
              help="Uncounted boots of each variant before the pairs.")  # fmt: skip
@click.option("--alpha", type=float, default=0.05, show_default=True, help="1 - confidence.")
@click.option("--correction", type=click.Choice(CORRECTIONS), default=BONFERRONI,
              show_default=True, help="bonferroni: every interval holds at once.")  # fmt: skip
@engine_option
@json_option
def cost(
    config_path: Path,
    variant_texts: tuple[str, ...],
    common: tuple[str, ...],
    pairs: int,
    order: str,
    seed: int,
    warmup: int,
    alpha: float,
    correction: str,
    engine: str,
    as_json: bool,
) -> None:
    """Measure what instrumentation costs: interleaved boots with it on and off."""
    # Here, not at the top: `rig cost --help` needs no numpy or scipy (rig/commands/group.py).
    from rig.compare.stats import Settings
    from rig.cost.run import RESULT, parse_variants, run_cost, variant_configs
    from rig.cost.stats import schedule, stage_costs

    try:
        settings = Settings(alpha=alpha)
    except ValueError as e:
        fail(f"--alpha: {e}", as_json)
    variants = parse_variants(variant_texts)
    cfgs = variant_configs(config_path, variants, common)
    results_dir = cfgs[OFF].results_dir
    probe_results_dir(results_dir, f"{cfgs[OFF].path}: key 'rig.results_dir'")
    recover_leftovers(results_dir, as_json)
    sequence = schedule(pairs, order, seed)
    stop = StopFlag()
    with spinner(as_json) as progress:
        task = progress.add_task("starting instruments", total=None)
        with stop.installed():
            run = run_cost(
                cfgs, sequence, warmup, engine, stop.event,
                lambda text: progress.update(task, description=text),
            )  # fmt: skip
    on, off = run.sides[ON], run.sides[OFF]
    names = stage_names(off, on)
    costs = stage_costs(names, on.samples(), off.samples(), settings, correction)
    args = {"pairs": pairs, "order": order, "seed": seed, "warmup": warmup}
    doc = cost_doc(run, costs, variants, settings, {**args, "correction": correction})
    empty = [v for v in VARIANTS if not run.sides[v].boots]
    doc["error"] = f"variant {empty[0]}: no boot that counts" if empty else None
    rundir.write_json(run.folder / RESULT, doc)
    if as_json:
        emit_json(doc)
    else:
        print_costs(doc, costs)
        if doc["error"]:
            console.print(f"[bold red]error:[/] {escape(doc['error'])}", highlight=False)
    if run.interrupted:
        raise SystemExit(stop.exit_code)
    raise SystemExit(EXIT_BOARD_FAILED if empty else EXIT_OK)
