"""The `rig` group: every subcommand by name, imported only when it is used (click's
"Lazily Loading Subcommands"): their imports (numpy, scipy, plotly, the InfluxDB client)
take over a second, and `rig --help` needs none. Each command's first help paragraph is
here so the listing imports nothing (tests/test_cli_startup.py checks they match)."""

from __future__ import annotations

import importlib

import click

from rig import __version__

# name -> ("module:attribute", the first paragraph of the command's help)
COMMANDS: dict[str, tuple[str, str]] = {
    "analyze": (
        "rig.commands.analyze:analyze",
        "Analyze artifact folders (results/<run-id>/) and write their report.json.",
    ),
    "bisect": (
        "rig.bisect.command:bisect",
        "Find the commit that made a stage slower: build, boot and rank-test commit by "
        "commit between a good and a bad one.",
    ),
    "compare": (
        "rig.compare.command:compare",
        "Compare boots before and after a change: run folders, soak ids or folders, folders "
        "of runs, or influx:board=B,variant=V,since=7d; BEFORE and AFTER split by `--`.",
    ),
    "cost": (
        "rig.cost.command:cost",
        "Measure what instrumentation costs: interleaved boots with it on and off.",
    ),
    "decoders": (
        "rig.commands.decoders:decoders",
        "The sigrok protocol decoder (`bootmarkers`) behind the marker scan.",
    ),
    "grafana": ("rig.commands.grafana:grafana", "Grafana dashboards as code (config/grafana/)."),
    "influx": (
        "rig.commands.influx:influx",
        "Boot reports in InfluxDB: serve a private server, push, replay, status.",
    ),
    "prune": (
        "rig.commands.prune:prune",
        "Delete derived files (report.html, uart.bin) of old boots, and with --raw their raw "
        "artifacts unless the boot failed or is flagged; report.json and run.json always stay.",
    ),
    "qemu": (
        "rig.commands.qemu:qemu",
        "The QEMU arm64 and armv7 targets (real U-Boot and Linux under emulation).",
    ),
    "report": (
        "rig.commands.report:report",
        "HTML report of run folders (or of every run folder in a results folder).",
    ),
    "run": (
        "rig.measure.command:run",
        "Power-cycle the target once, measure the boot, write results/<run-id>/.",
    ),
    "sim": (
        "simboard.cli:sim",
        "The simulated target board (stands in for relay, console and analyzer).",
    ),
    "soak": (
        "rig.soak.command:soak",
        "Power-cycle the target again and again; journal, summarise, report every cycle.",
    ),
    "try": (
        "rig.trial.command:try_",
        "Prove what advice gains: boot with and without each advisory's knob, interleaved.",
    ),
    "trend": (
        "rig.trend.command:trend",
        "Find change points in the boot-time history per board, variant and stage.",
    ),
}


class LazyGroup(click.Group):
    """A group whose subcommands in `lazy` are imported when invoked or asked for help."""

    def __init__(self, *args: object, lazy: dict[str, tuple[str, str]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, attr = self.lazy[cmd_name][0].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own listing, over stand-ins that carry only the help text of commands
        # not imported yet.
        shown = {
            name: self.commands.get(name) or click.Command(name, help=self.lazy[name][1])
            for name in self.list_commands(ctx)
        }
        click.Group(self.name, commands=shown).format_commands(ctx, formatter)


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rig")
def main() -> None:
    """bootrig: where do the milliseconds between power-on and a usable UI go?"""
