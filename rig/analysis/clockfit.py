"""Fitting one clock onto another: the printk clock onto the analyzer clock.

ref = offset + slope * x, least squares over anchor pairs (a GPIO edge and the printk
timestamp of the tag its hook printed). The fit is reported with its anchors and
residuals, and each mapped time gets an uncertainty from the fit's prediction error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: printk prints microseconds, truncated.
PRINTK_RESOLUTION_S = 1e-6
#: With fewer than three anchors the scatter cannot be measured; assume this much
#: (hook-to-printk delay jitter) rather than pretend the fit is perfect.
PRIOR_SCATTER_S = 10e-6
#: With one anchor the drift is unknown; assume a crystal within this many ppm.
PRIOR_DRIFT_PPM = 100.0


@dataclass(frozen=True)
class Anchor:
    name: str
    x: float  # the clock being mapped (printk seconds)
    y: float  # the reference (seconds from the power edge)


@dataclass(frozen=True)
class LinearFit:
    offset: float
    slope: float
    anchors: tuple[Anchor, ...]
    residuals: tuple[float, ...]
    scatter: float  # residual standard deviation, or the prior when not measurable
    x_mean: float
    sxx: float

    def __call__(self, x: float) -> float:
        return self.offset + self.slope * x

    def uncertainty(self, x: float) -> float:
        """A bound (3 sigma of the prediction, plus printk truncation) for time `x`."""
        n = len(self.anchors)
        if n == 1:
            drift = PRIOR_DRIFT_PPM * 1e-6 * abs(x - self.x_mean)
            return 3 * self.scatter + drift + PRINTK_RESOLUTION_S
        pred = self.scatter * math.sqrt(1 / n + (x - self.x_mean) ** 2 / self.sxx)
        return 3 * max(pred, self.scatter / math.sqrt(n)) + PRINTK_RESOLUTION_S

    @property
    def drift_ppm(self) -> float:
        return (1 / self.slope - 1) * 1e6 if self.slope else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": "ref = offset_s + slope * printk_s",
            "offset_s": self.offset,
            "slope": self.slope,
            "drift_ppm": self.drift_ppm,
            "anchors": [{"name": a.name, "printk_s": a.x, "ref_s": a.y} for a in self.anchors],
            "residuals_s": list(self.residuals),
            "rms_residual_s": math.sqrt(sum(r * r for r in self.residuals) / len(self.residuals)),
            "scatter_s": self.scatter,
        }


def fit(anchors: list[Anchor]) -> LinearFit | None:
    """Least squares line through the anchors; None without any."""
    n = len(anchors)
    if n == 0:
        return None
    xs = [a.x for a in anchors]
    ys = [a.y for a in anchors]
    xm, ym = sum(xs) / n, sum(ys) / n
    sxx = sum((x - xm) ** 2 for x in xs)
    if n == 1 or sxx == 0:
        slope = 1.0
        offset = ym - xm
    else:
        slope = sum((x - xm) * (y - ym) for x, y in zip(xs, ys, strict=True)) / sxx
        offset = ym - slope * xm
    res = tuple(y - (offset + slope * x) for x, y in zip(xs, ys, strict=True))
    if n >= 3:
        scatter = max(math.sqrt(sum(r * r for r in res) / (n - 2)), PRINTK_RESOLUTION_S)
    else:
        scatter = PRIOR_SCATTER_S
    return LinearFit(offset, slope, tuple(anchors), res, scatter, xm, sxx or 1.0)
