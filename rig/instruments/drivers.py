"""Importing this registers every instrument driver (rig.instruments.registry)."""

from rig.instruments import (  # noqa: F401 - imported for their @register side effect
    analyzer_sigrok,
    analyzer_sim,
    console_labgrid,
    console_serial,
    labgrid_analyzer,
    power_command,
    power_labgrid,
    power_visa,
    relay_ch340,
    relay_numato,
)
from rig.instruments.qemu import drivers as qemu_drivers  # noqa: F401
