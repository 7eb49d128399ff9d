"""`rig run`: one measured power cycle, then its analysis."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import click
from rich.markup import escape

from rig import steps
from rig.artifacts.rundir import probe_results_dir
from rig.commands.common import (
    config_option,
    console,
    emit_json,
    engine_option,
    fail,
    json_option,
    outcome_exit_code,
    recover_leftovers,
    spinner,
)
from rig.config.target import place_override
from rig.errors import EXIT_RIG_FAILED, ArtifactError, RigError, exit_code
from rig.instruments.drivers import load_config
from rig.instruments.setup import Instruments
from rig.sinks.influx.deliver import Delivery, deliver_or_note
from rig.sinks.terminal import print_report
from rig.soak.signals import StopFlag


@click.command()
@config_option()
@click.option(
    "--board",
    type=click.Path(path_type=Path),
    help="Simulated board profile to boot instead of the config's (config/boards/*.toml).",
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a config key for this run (TOML value), e.g. "
    "--set 'qemu.kernel_args=\"initcall_debug loglevel=8\"'.",
)
@click.option(
    "--place",
    metavar="NAME",
    help="Boot the board of this labgrid place: acquired for the run, its power and "
    "console (and exported analyzer) used, always released ([target] place).",
)
@engine_option
@json_option
def run(
    config_path: Path,
    board: Path | None,
    overrides: tuple[str, ...],
    place: str | None,
    engine: str,
    as_json: bool,
) -> None:
    """Power-cycle the target once, measure the boot, write results/<run-id>/."""
    # Here, not at the top: `rig run --help` needs no numpy (rig/commands/group.py).
    from rig.measure.cycle import kept_files, run_cycle
    from rig.measure.pipeline import analyze_folder
    from rig.sinks.files import save_report

    overrides = (*overrides, *place_override(place))  # as --set would
    # A RigError raised here exits with its kind's code (json_option).
    cfg = load_config(config_path, board=board, overrides=overrides)
    probe_results_dir(cfg.results_dir, f"{cfg.path}: key 'rig.results_dir'")  # before power
    recovered = recover_leftovers(cfg.results_dir, as_json)
    stop = StopFlag()
    with spinner(as_json) as progress:
        task = progress.add_task("starting instruments", total=None)

        def show(event: steps.StepEvent) -> None:
            if event.kind == "start":  # the step just begun, as the spinner's text
                progress.update(task, description=event.step.title)

        # Ctrl-C or SIGTERM ends the wait for the boot: the capture is stopped and
        # kept, the target powered off and the instruments (sigrok-cli, QEMU, the
        # simulator) released; the run is filed as interrupted (exit 130 or 143).
        with steps.subscribed(show), stop.installed(), Instruments(cfg) as bench:
            result = run_cycle(cfg, bench, abort=stop.event)
        progress.update(task, description="analyzing")
        try:
            report = analyze_folder(result.folder, engine=engine)
            save_report(result.folder, report)
        except RigError as e:  # the rig wrote these artifacts: its failure, not input
            code = EXIT_RIG_FAILED if isinstance(e, ArtifactError) else exit_code(e)
            fail(f"analysis failed (artifacts kept): {e}", as_json, code)
        except OSError as e:  # a full disk: the measurement is on disk, its report is not
            fail(
                f"disk: the report could not be written ({e}); the run's artifacts in "
                f"{result.folder} are kept ({kept_files(result.folder)}): run `rig analyze "
                f"{result.folder}` once there is space",
                as_json,
                EXIT_RIG_FAILED,
            )
        influx: Delivery | None = None
        if cfg.influx:
            progress.update(task, description="writing to InfluxDB")
            influx = deliver_or_note(report, cfg.influx, cfg.results_dir)
    if as_json:
        emit_json(
            {
                "folder": str(result.folder),
                "report": report.to_json(),
                "influx": asdict(influx) if influx else None,
                "recovered": recovered,
            }
        )
    else:
        print_report(report, console, str(result.folder))
        if influx:
            console.print(escape(influx.describe()), highlight=False)
    if stop.is_set():
        raise SystemExit(stop.exit_code)
    raise SystemExit(outcome_exit_code(report.outcome, measured_now=True))
