"""`python -m rig.soak ...`: the same command as `rig soak`."""

from rig.commands.soak import soak

soak(prog_name="rig soak")
