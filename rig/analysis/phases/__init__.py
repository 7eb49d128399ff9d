"""Timed sub-phases of the boot stages, built from parsed console records.

`phase` (the `Phase` record and the `Timer` that times one from its evidence), `build`
(all phases of a console: U-Boot work, systemd units) and `kernel` (kernel sub-phases).
"""
