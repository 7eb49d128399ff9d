"""Soak: many measured power cycles, each journaled, classified and summarised.

`rig soak` (rig/soak/command.py) and the Robot library's `Run Soak` use `run_soak`
(rig/soak/run.py); docs/soak.md describes the journal, resume and the exit codes.
"""
