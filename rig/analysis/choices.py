"""The statistics' named choices and defaults, in a module without numpy or scipy, so
that `rig compare|cost|trend --help` load none of the statistics (rig/commands/group.py).
"""

from __future__ import annotations

#: Multiple stages at once (rig.compare.stats.stage_settings).
BONFERRONI = "bonferroni"
CORRECTIONS = (BONFERRONI, "none")

#: The variants of `rig cost` (rig.cost.stats): instrumentation on and off.
ON = "on"
OFF = "off"
VARIANTS = (ON, OFF)
#: Boot orders of `rig cost` (rig.cost.stats): `abab` on, off, on, off...; `abba` on,
#: off, off, on, on, off... (a linear drift cancels within every two pairs); `random` each
#: two pairs are on-off-off-on or off-on-on-off by a seeded coin (drift cancels as in
#: abba, and nothing periodic in the rig can line up with the variants), a last odd pair
#: by a coin too.
ORDERS = ("random", "abba", "abab")

# Change points (rig.trend.stats):
#: beta of the penalty beta * sigma^2 * ln(n). 2 is BIC for a change in mean with known
#: variance, and finds a false change point in about 1 series of 20 (60 boots, no
#: change); 4 brings it under 1 in 100 while a 3 sigma step in the middle of 60 boots is
#: still found in 97 % of series (docs/trend.md; tests/test_trend.py measures both).
PENALTY_FACTOR = 4.0
DEFAULT_MIN_SEGMENT = 8
#: The rank test's level per change point. PELT puts a candidate where the two sides
#: differ most, so the test on those same boots is optimistic: it is a filter for
#: candidates the penalty let through, at a strict level.
DEFAULT_ALPHA = 0.001
