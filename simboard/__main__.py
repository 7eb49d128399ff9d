"""`python -m simboard serve ...`: the simulator without the rest of the `rig` command.

`python -m rig sim ...` is the same command; this entry point only imports the
simulator, so a board can be started even while other subcommands fail to import.
"""

from simboard.cli import sim

sim(prog_name="rig sim")
