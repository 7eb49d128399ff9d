"""Robot Framework keyword library of bootrig: `Library    rig.robot.BootRig`.

Keyword documentation: `make robot-docs` (libdoc HTML) and docs/robot.md.
"""

from rig.robot.library import BootRig

__all__ = ["BootRig"]
