"""`rig bisect`: find the commit that made a stage slower (docs/bisect.md).

`plan` (which commit next) and `decide` (what one step's boots say) are pure, like
rig/analysis (tests/test_layers.py checks them); `git`, `build`, `journal` and `runner`
do the I/O.
"""
