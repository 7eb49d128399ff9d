"""Instruments: the rig's I/O with hardware (or the simulated board), behind small protocols."""
