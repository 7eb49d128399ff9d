"""The simulated target board: a separate process standing in for hardware.

It speaks the same interfaces real parts do (a CH340 relay on a pty, a paced serial
console on a pty, a logic analyzer behind a control socket) and writes the ground truth
of every boot. See docs/simulator.md.
"""
