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
#: Boot orders of `rig cost` (docs/cost.md): in `abba` and `random` (abba or baab by a
#: seeded coin, so nothing periodic lines up) a linear drift cancels every two pairs.
ORDERS = ("random", "abba", "abab")
#: How `rig try` gets a U-Boot variable to the board (rig.trial.knobs): `auto` is `config`
#: where the target's config carries U-Boot variables (the QEMU target, the simulator),
#: `console` elsewhere (docs/uboot-env.md); `console` on QEMU takes its flash's saveenv.
UBOOT_ENV_WAYS = ("auto", "config", "console")

# Change points (rig.trend.stats):
#: beta of the penalty beta * sigma^2 * ln(n): BIC's 2 finds a false change point in 1
#: series of 20 (60 boots), 4 in under 1 of 100 and still 97 % of 3 sigma steps
#: (docs/trend.md; tests/test_trend.py measures both).
PENALTY_FACTOR = 4.0
DEFAULT_MIN_SEGMENT = 8
#: The rank test's level per change point: strict, since PELT puts a candidate where the
#: sides differ most and the test on those boots is optimistic (a filter, not a test).
DEFAULT_ALPHA = 0.001
