"""`rig try`: boot the target with and without each advisory's knob, interleaved, and
measure what the advice gains on power-to-UI (docs/try.md).

Exit code: 0 every advice tried was measured (whatever it gained), 1 a variant had no
boot that counts, 2 bad input (no such advice, nothing to try, a bad override), 3 the rig
failed, 130/143 interrupted."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from rig.analysis.choices import ORDERS, UBOOT_ENV_WAYS
from rig.artifacts import rundir
from rig.commands.common import (
    config_option,
    console,
    emit_json,
    engine_option,
    fail,
    fmt_ms,
    json_option,
    recover_leftovers,
    spinner,
)
from rig.errors import EXIT_BOARD_FAILED, EXIT_OK, InputError
from rig.soak.signals import StopFlag

_STYLE = {"gained": "bold green", "slower": "bold red", "broke": "bold red"}


def print_trials(doc: dict[str, Any]) -> None:
    from rig.compare.command import verdict_table
    from rig.model.codec import load
    from rig.model.knob import Knob

    t = verdict_table(
        f"gain = without - with, power-to-UI (ms), {1 - doc['alpha']:.0%} confidence overall",
        ("advice", "knob", "predicted", "gain", "CI low", "CI high", "verdict", "prediction"),
    )
    for tr in doc["trials"]:
        m = tr["measured"] or {}
        v = m.get("verdict", "-")
        t.add_row(
            tr["rule"], escape(load(Knob, tr["knob"]).written), fmt_ms(tr["predicted_s"]),
            fmt_ms(m.get("gain_s"), True), fmt_ms(m.get("ci_low_s"), True),
            fmt_ms(m.get("ci_high_s"), True), f"[{_STYLE.get(v, 'dim')}]{v}[/]",
            m.get("prediction") or "-",
        )  # fmt: skip
    console.print(t)
    for tr in doc["trials"]:
        m = tr["measured"] or {}
        if m and not m["outcome_kept"]:
            console.print(
                f"[bold red]{tr['rule']}:[/] the outcome changed: without "
                f"{m['outcomes_without']}, with {m['outcomes_with']}",
                highlight=False,
            )
    for tr in doc["trials"]:
        how = ", ".join(tr["sets"])
        if at := tr.get("uboot_console"):
            changes = " ".join(f"{k}={v}" for k, v in at["changes"].items())
            how = f"{changes} saved at the U-Boot prompt ({len(at['blocks'])} blocks)"
        console.print(f"{tr['rule']}: booted with {escape(how)}", highlight=False)
    for rule, why in doc["untried"]:
        console.print(f"not tried: {rule}: {escape(why)}", highlight=False)
    recorded = " (verified gains recorded in it)" if doc.get("recorded") else ""
    console.print(f"advice from: {escape(doc['source'])}{recorded}", highlight=False)
    if doc.get("influx"):
        console.print(f"influx: {doc['influx']['status']}", highlight=False)
    console.print(f"boots: [bold]{escape(doc['folder'])}[/]", highlight=False)


@click.command(name="try")
@click.argument("source", required=False, type=click.Path(path_type=Path))
@config_option()
@click.option("--advice", "rules", multiple=True, metavar="RULE",
              help="Only this advisory (repeatable), e.g. --advice uboot_bootdelay.")  # fmt: skip
@click.option("--set", "common", multiple=True, metavar="KEY=VALUE",
              help="Override a config key for every boot, with and without the knob.")  # fmt: skip
@click.option("--pairs", type=click.IntRange(min=1), default=6, show_default=True,
              help="Boots with and without each knob.")  # fmt: skip
@click.option("--order", type=click.Choice(ORDERS), default="random", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --order random.")
@click.option("--warmup", type=click.IntRange(min=0), default=1, show_default=True,
              help="Uncounted boots of each variant first, per advice.")  # fmt: skip
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="1 - confidence, for all the advice tried together (Bonferroni).")  # fmt: skip
@click.option("--uboot-env", "uboot_env", type=click.Choice(UBOOT_ENV_WAYS), default="auto",
              show_default=True,
              help="How a U-Boot variable reaches the board: through the config (QEMU, "
              "simulator) or set at the U-Boot prompt and saveenv (console); auto: the "
              "config where it carries them.")  # fmt: skip
@engine_option
@json_option
def try_(
    source: Path | None,
    config_path: Path,
    rules: tuple[str, ...],
    common: tuple[str, ...],
    pairs: int,
    order: str,
    seed: int,
    warmup: int,
    alpha: float,
    uboot_env: str,
    engine: str,
    as_json: bool,
) -> None:
    """Prove what advice gains: boot with and without each advisory's knob, interleaved."""
    from rig.compare.stats import Settings
    from rig.instruments.drivers import load_config
    from rig.trial.knobs import Untryable
    from rig.trial.run import (
        PREFIX,
        RESULT,
        SCHEMA,
        Plan,
        Trial,
        record,
        restore_leftovers,
        try_one,
        variants,
    )
    from rig.trial.source import boot_once, read_source, select

    try:
        Settings(alpha=alpha)
    except ValueError as e:
        fail(f"--alpha: {e}", as_json)
    base = load_config(config_path, overrides=list(common))
    rundir.probe_results_dir(base.results_dir, f"{base.path}: key 'rig.results_dir'")
    recover_leftovers(base.results_dir, as_json)
    plan = Plan(config_path, common, pairs, order, seed, warmup, engine, uboot_env)
    stop = StopFlag()
    _, folder = rundir.new_run_folder(base.results_dir, prefix=PREFIX)
    doc: dict[str, Any] = {"schema": SCHEMA, "folder": str(folder), "alpha": alpha}
    trials: list[Trial] = []
    with spinner(as_json) as progress, stop.installed():
        task = progress.add_task("starting", total=None)
        say = lambda text: progress.update(task, description=text)  # noqa: E731
        doc["restored"] = restore_leftovers(base, plan)  # before the board is touched
        if source is None:
            say("booting once for the advice")
            cfg = dataclasses.replace(base, results_dir=folder)
            report_path = boot_once(cfg, folder, engine, stop.event)
        else:
            report_path = read_source(source)
        advice = select(report_path, rules)
        for a in advice.tried:
            try:
                sets, cfgs, at_prompt = variants(plan, base, a, advice.cmdline)
            except Untryable as e:
                advice.untried.append((a.rule, str(e)))
                continue
            trials.append(Trial(a, sets, cfgs, at_prompt))
        if not trials:
            why = "; ".join(f"{r}: {w}" for r, w in advice.untried) or "no advisory"
            raise InputError(f"{report_path}: nothing to try ({why})")
        each = alpha / len(trials)
        for tr in trials:
            if stop.event.is_set():
                break
            say(f"{tr.advisory.rule}: {' '.join(tr.sets) or 'at the U-Boot prompt'}")
            try_one(plan, tr, folder, each, stop.event, say)
    doc["recorded"] = record(report_path, advice.report, trials, pairs)
    if doc["recorded"] and base.influx:
        from rig.sinks.influx.deliver import deliver_or_note

        delivery = deliver_or_note(advice.report, base.influx, base.results_dir)
        doc["influx"] = dataclasses.asdict(delivery)
    doc.update(
        source=str(report_path),
        trials=[t.to_json() for t in trials],
        untried=[[r, w] for r, w in advice.untried],
        interrupted=stop.event.is_set(),
    )
    rundir.write_json(folder / RESULT, doc)
    if as_json:
        emit_json(doc)
    else:
        print_trials(doc)
    if stop.event.is_set():
        raise SystemExit(stop.exit_code)
    empty = any(t.gain is None or not t.gain.outcomes_without for t in trials)
    raise SystemExit(EXIT_BOARD_FAILED if empty else EXIT_OK)
