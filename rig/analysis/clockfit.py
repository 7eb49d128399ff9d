"""Fitting the printk clock onto the analyzer clock: ref = offset + slope * x, least
squares over anchors (a GPIO edge and its tag's printk stamp), each mapped time with the
fit's prediction error. The slope is a crystal's, 1 within PRIOR_DRIFT_PPM, moved only as
far as the anchors measure it: two hooks 60 ms apart with 20 us of jitter do not show a
350 ppm drift. A `late` tag (stamped up to `late_s` after its edge) is set apart when
anchors stamped at their edge exist; alone, it gives the offset at the middle of its
bound and states the other half (`bias_u`). docs/analysis.md explains the sources.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from rig.model.clocks import ClockAnchor, PrintkFit

#: printk prints microseconds, truncated.
PRINTK_RESOLUTION_S = 1e-6
#: With fewer than three anchors the scatter cannot be measured; assume this much
#: (hook-to-printk delay jitter) rather than pretend the fit is perfect.
PRIOR_SCATTER_S = 10e-6
#: With one anchor the drift is unknown; assume a crystal within this many ppm.
PRIOR_DRIFT_PPM = 100.0


#: The drift prior as a standard deviation.
PRIOR_SLOPE_SD = PRIOR_DRIFT_PPM * 1e-6 / 3


@dataclass(frozen=True)
class Anchor:
    name: str
    x: float  # the clock being mapped (printk seconds)
    y: float  # the reference (seconds from the power edge)
    late_s: float = 0.0  # the stamp may follow the edge by up to this (a variable path)


@dataclass(frozen=True)
class LinearFit:
    offset: float
    slope: float
    anchors: tuple[Anchor, ...]
    residuals: tuple[float, ...]
    scatter: float  # residual standard deviation, or the prior when not measurable
    x_mean: float
    rejected: tuple[Anchor, ...] = ()
    slope_var: float = PRIOR_SLOPE_SD**2  # the slope's variance, the prior included
    bias_u: float = 0.0  # half the bound of a late stamp the offset rests on
    late: tuple[Anchor, ...] = ()  # late anchors set apart for ones stamped at their edge

    def __call__(self, x: float) -> float:
        return self.offset + self.slope * x

    def uncertainty(self, x: float) -> float:
        """A bound (3 sigma of the prediction, plus printk truncation and the bias a late
        stamp may leave) for time `x`."""
        n = len(self.anchors)
        pred = math.sqrt(self.scatter**2 / n + self.slope_var * (x - self.x_mean) ** 2)
        return 3 * pred + self.bias_u + PRINTK_RESOLUTION_S

    @property
    def rate_uncertainty(self) -> float:
        """3 sigma of the fitted slope (relative rate error of the mapped clock)."""
        return 3 * math.sqrt(self.slope_var)

    @property
    def drift_ppm(self) -> float:
        return (1 / self.slope - 1) * 1e6 if self.slope else 0.0

    def to_model(self) -> PrintkFit:
        return PrintkFit(
            model="ref = offset_s + slope * printk_s",
            offset_s=self.offset,
            slope=self.slope,
            drift_ppm=self.drift_ppm,
            anchors=[ClockAnchor(a.name, a.x, a.y) for a in self.anchors],
            rejected=[ClockAnchor(a.name, a.x, a.y) for a in self.rejected],
            late_anchors=[ClockAnchor(a.name, a.x, a.y, a.late_s) for a in self.late],
            drift_uncertainty_ppm=self.rate_uncertainty * 1e6,
            bias_uncertainty_s=self.bias_u,
            residuals_s=list(self.residuals),
            rms_residual_s=math.sqrt(sum(r * r for r in self.residuals) / len(self.residuals)),
            scatter_s=self.scatter,
        )


#: An anchor whose residual exceeds this many robust sigmas (and OUTLIER_FLOOR_S) is
#: rejected: a hook that printed late, a tag line that matched by accident.
OUTLIER_SIGMAS = 5.0
OUTLIER_FLOOR_S = 50e-6


def fit(anchors: list[Anchor]) -> LinearFit | None:
    """Least squares line through the anchors, outliers rejected against a Theil-Sen line
    (one bad anchor cannot drag it as it drags least squares); None without any."""
    if not anchors:
        return None
    exact = [a for a in anchors if a.late_s <= 0]
    late = tuple(a for a in anchors if a.late_s > 0) if exact else ()
    bias = 0.0
    if not exact:
        # Only late stamps: each edge was up to late_s before its stamp; take the middle.
        bias = max(a.late_s for a in anchors) / 2
        exact = [Anchor(a.name, a.x, a.y + a.late_s / 2, a.late_s) for a in anchors]
    kept, rejected = list(exact), []
    if len(exact) >= 4:
        slopes = sorted(
            (b.y - a.y) / (b.x - a.x)
            for i, a in enumerate(exact)
            for b in exact[i + 1 :]
            if b.x != a.x
        )
        if slopes:
            k = slopes[len(slopes) // 2]
            c = sorted(a.y - k * a.x for a in exact)[len(exact) // 2]
            res = [abs(a.y - (c + k * a.x)) for a in exact]
            limit = max(OUTLIER_SIGMAS * 1.4826 * sorted(res)[len(res) // 2], OUTLIER_FLOOR_S)
            kept = [a for a, r in zip(exact, res, strict=True) if r <= limit]
            rejected = [a for a, r in zip(exact, res, strict=True) if r > limit]
    out = _lsq(kept, tuple(rejected))
    return dataclasses.replace(out, bias_u=bias, late=late) if out else None


def _lsq(anchors: list[Anchor], rejected: tuple[Anchor, ...]) -> LinearFit | None:
    n = len(anchors)
    if n == 0:
        return None
    xs = [a.x for a in anchors]
    ys = [a.y for a in anchors]
    xm, ym = sum(xs) / n, sum(ys) / n
    sxx = sum((x - xm) ** 2 for x in xs)
    slope, var = 1.0, PRIOR_SLOPE_SD**2
    scatter = PRIOR_SCATTER_S
    if n >= 2 and sxx > 0:
        k = sum((x - xm) * (y - ym) for x, y in zip(xs, ys, strict=True)) / sxx
        if n >= 3:
            res = [y - (ym + k * (x - xm)) for x, y in zip(xs, ys, strict=True)]
            scatter = max(math.sqrt(sum(r * r for r in res) / (n - 2)), PRINTK_RESOLUTION_S)
        # The measured slope and the crystal prior, each weighted by its precision.
        w_fit, w_prior = sxx / scatter**2, 1 / PRIOR_SLOPE_SD**2
        slope = (k * w_fit + w_prior) / (w_fit + w_prior)
        var = 1 / (w_fit + w_prior)
    offset = ym - slope * xm
    res_t = tuple(y - (offset + slope * x) for x, y in zip(xs, ys, strict=True))
    return LinearFit(offset, slope, tuple(anchors), res_t, scatter, xm, rejected, var)


@dataclass(frozen=True)
class EnvelopeFit(LinearFit):
    """The printk map of a console-only run (consoleclock.floor_fit): slope 1 under the
    arrivals through the one at printk time `x_ref`; away from it the kernel's drift
    (PRIOR_DRIFT_PPM at most) adds up. `band_u`: the latency the map may still hold."""

    band_u: float = 0.0
    x_ref: float = 0.0

    def uncertainty(self, x: float) -> float:
        return self.band_u + PRIOR_DRIFT_PPM * 1e-6 * abs(x - self.x_ref)

    @property
    def rate_uncertainty(self) -> float:
        return PRIOR_DRIFT_PPM * 1e-6

    def to_model(self) -> PrintkFit:
        fit = super().to_model()
        fit.model = (
            "ref = offset_s + slope * printk_s, lower envelope of arrivals; "
            f"slope 1, drift within {PRIOR_DRIFT_PPM:g} ppm of printk_ref_s"
        )
        fit.uncertainty_s = self.band_u
        fit.printk_ref_s = self.x_ref
        return fit
