"""Find a UART's baud rate from the lengths of its runs (time between transitions):
each standard rate scored by the runs it explains (docs/engines.md, "Baud rate")."""

from __future__ import annotations

import numpy as np

STANDARD_BAUDS = (
    300, 600, 1200, 2400, 4800, 9600, 14400, 19200, 28800, 38400, 57600, 74880, 76800,
    115200, 128000, 153600, 230400, 250000, 256000, 460800, 500000, 576000, 921600,
    1000000, 1152000, 1500000, 2000000, 2500000, 3000000, 3500000, 4000000,
)  # fmt: skip
#: Fewer samples per bit than this cannot be told from noise (sigrok needs some too).
MIN_SAMPLES_PER_BIT = 4.0
#: A run within this many bits of a whole number of bits is explained by a rate.
TOLERANCE_BITS = 0.25
#: Longer runs are idle line or breaks, which say nothing about the rate.
MAX_RUN_BITS = 9.75
#: Measured rates further than this from every standard rate are kept as measured.
SNAP = 0.02
_MAX_RUNS = 1_000_000


#: Runs of 1, 2 and 3 bits must each be at least this share of the in-frame runs...
MIN_SHARE = 0.01
#: ...once there are this many; below, single-bit runs are enough.
FEW = 100
#: Fewer in-frame runs (a byte or two) fit too many rates: no guess then.
MIN_RUNS = 20


def _fit(runs: np.ndarray, bw: float) -> tuple[int, np.ndarray, np.ndarray]:
    """(score, which runs the bit width explains, their bit counts); score < 0: no fit."""
    x = runs / bw
    n = np.rint(x)
    inframe = x < MAX_RUN_BITS
    fit = inframe & (n >= 1) & (np.abs(x - n) <= TOLERANCE_BITS)
    total = int(np.count_nonzero(inframe))
    # A few bytes ("U", "ok") need not have every run length; noise needs numbers.
    shares = [np.count_nonzero(fit & (n == k)) for k in ((1, 2, 3) if total >= FEW else (1,))]
    if total < MIN_RUNS or min(shares) < max(3, MIN_SHARE * total):
        return -1, fit, n
    return 2 * int(np.count_nonzero(fit)) - total, fit, n


def detect_baud(at: np.ndarray, samplerate: int) -> int | None:
    """The baud rate of a line with transitions at samples `at`; None if it never talks."""
    runs = np.diff(np.asarray(at, dtype=np.int64)).astype(np.float64)
    if len(runs) > _MAX_RUNS:  # plenty to decide on; keeps noisy lines cheap
        runs = runs[:: len(runs) // _MAX_RUNS + 1]
    best: tuple[int, float] | None = None
    for baud in STANDARD_BAUDS:
        bw = samplerate / baud
        if bw < MIN_SAMPLES_PER_BIT:
            break
        score, _, _ = _fit(runs, bw)
        if score > 0 and (best is None or score > best[0]):
            best = (score, bw)
    if best is None:
        return None
    _, fit, n = _fit(runs, best[1])
    measured = samplerate * float(n[fit].sum()) / float(runs[fit].sum())
    nearest = min(STANDARD_BAUDS, key=lambda b: abs(np.log(b / measured)))
    return nearest if abs(nearest / measured - 1) <= SNAP else round(measured)
