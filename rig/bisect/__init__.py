"""`rig bisect`: find the commit that made a stage slower (docs/bisect.md). `plan` and
`decide` are pure, like rig/analysis (tests/test_layers.py); the rest does the I/O."""
