from rig.cli import entry

entry()
