"""Advisory rules for the known boot-time offenders, one small function each.

A rule takes the `Context` of one analyzed boot and returns advisories whose gain is
measured on that boot. `rig.analysis.advisor` runs them all and sorts by gain.
"""
