"""The `rig` command. Each subcommand lives in its own module; this file only wires them."""

from __future__ import annotations

import click

from rig import __version__
from rig.commands.analyze import analyze
from rig.commands.decoders import decoders
from rig.commands.grafana import grafana
from rig.commands.influx import influx
from rig.commands.qemu import qemu
from rig.commands.report import report
from rig.commands.run import run
from rig.commands.soak import soak
from rig.sim.cli import sim


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rig")
def main() -> None:
    """bootrig: where do the milliseconds between power-on and a usable UI go?"""


main.add_command(run)
main.add_command(analyze)
main.add_command(sim)
main.add_command(decoders)
main.add_command(influx)
main.add_command(report)
main.add_command(grafana)
main.add_command(soak)
main.add_command(qemu)
