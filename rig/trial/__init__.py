"""`rig try`: boot the target with and without each advisory's knob and measure its gain."""
