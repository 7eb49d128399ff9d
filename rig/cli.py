"""The `rig` command. Each subcommand lives in its own module; this file only wires them."""

from __future__ import annotations

import sys

import click

from rig import __version__
from rig.commands.analyze import analyze
from rig.commands.common import fail
from rig.commands.compare import compare
from rig.commands.cost import cost
from rig.commands.decoders import decoders
from rig.commands.grafana import grafana
from rig.commands.influx import influx
from rig.commands.prune import prune
from rig.commands.qemu import qemu
from rig.commands.report import report
from rig.commands.run import run
from rig.commands.soak import soak
from rig.commands.trend import trend
from rig.errors import EXIT_OK, EXIT_SIGINT
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
main.add_command(compare)
main.add_command(prune)
main.add_command(trend)
main.add_command(cost)


def entry() -> None:
    """The `rig` executable: click's main with the documented exit codes (docs/exit-codes.md)
    for what reaches the top: an interrupt (a second Ctrl-C while the rig was already
    stopping) is 130, not click's 1, which means "the board failed" here; a usage error
    is 2; a `RigError` its kind's code; anything else one line naming it and 3, never a
    traceback (BOOTRIG_DEBUG=1 shows it)."""
    try:
        code = main.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        raise SystemExit(EXIT_SIGINT) from None
    except click.ClickException as e:  # usage errors: bad input, exit 2
        e.show()
        raise SystemExit(e.exit_code) from None
    except click.exceptions.Exit as e:
        raise SystemExit(e.exit_code) from None
    except Exception as e:  # a command without --json, or before its options were read
        fail(e, as_json="--json" in sys.argv[1:])
    # Without standalone mode click returns an explicit exit's code (e.g. --help's 0).
    raise SystemExit(code if isinstance(code, int) else EXIT_OK)
