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


def entry() -> None:
    """The `rig` executable: click's main, with the documented exit codes for an
    interrupt that reaches the top (a second Ctrl-C while the rig was already stopping):
    130 for SIGINT, not click's 1, which means "the board failed" here."""
    try:
        main.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        raise SystemExit(130) from None
    except click.ClickException as e:  # usage errors: bad input, exit 2
        e.show()
        raise SystemExit(e.exit_code) from None
    except click.exceptions.Exit as e:
        raise SystemExit(e.exit_code) from None
