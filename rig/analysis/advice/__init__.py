"""Advisory rules for the known boot-time offenders, one small function each, taking the
`Context` of one analyzed boot (`rig.analysis.advisor` runs them all)."""
