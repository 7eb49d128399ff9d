"""`python -m rig.soak ...`: the same command as `rig soak`."""

from rig.soak.command import soak

soak(prog_name="rig soak")
