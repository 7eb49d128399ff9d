"""Timed sub-phases of the boot stages, built from parsed console records.

`phase` (the `Timer` that times a phase from its evidence), `build`
(all phases of a console: U-Boot work, systemd units) and `kernel` (kernel sub-phases).
"""
