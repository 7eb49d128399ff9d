"""An advisory's knob: the one setting that applies it on the next boot, which `rig try`
turns (docs/analysis.md, "Knobs"), or `none` with what a person must do instead."""

from __future__ import annotations

from dataclasses import dataclass

from rig import names
from rig.model.codec import JSONObject, opt, rest

_WHERE = {names.KNOB_KERNEL_ARG: "kernel command line", names.KNOB_UBOOT_ENV: "U-Boot env"}


@dataclass
class Knob:
    """`kind` is names.KNOB_KERNEL_ARG, KNOB_UBOOT_ENV or KNOB_NONE; `op` KNOB_SET or
    KNOB_REMOVE (null for none). `value` null with `set` is a bare flag (`quiet`); with
    `remove` it is unused. `text`: what the setting does and what it needs, for people;
    `why` (none only): what to do instead, since no setting does it."""

    kind: str
    text: str
    op: str | None = None
    name: str | None = None
    value: str | None = None
    why: str | None = opt()
    extra: JSONObject = rest()

    @property
    def setting(self) -> str:
        """The argument as written: `quiet`, `lpj=1495040`, `bootdelay=0`."""
        return f"{self.name}={self.value}" if self.value is not None else f"{self.name}"

    @property
    def written(self) -> str:
        """The change as a person writes it: `lpj=1495040`, `without rootdelay`."""
        return f"without {self.name}" if self.op == names.KNOB_REMOVE else self.setting

    @property
    def where(self) -> str | None:
        """Where the setting lives, for people; None when nothing the rig sets applies it."""
        return _WHERE.get(self.kind) if self.name is not None else None

    @property
    def label(self) -> str:
        """One line for a report: `try: bootdelay=0 (U-Boot env)`; `why` says the rest
        for `none`."""
        if self.where is None:
            return "try: nothing the rig can set"
        return f"try: {self.written} ({self.where})"


def none(why: str, text: str = "nothing the rig can set") -> Knob:
    return Knob(names.KNOB_NONE, text, why=why)


def uboot_env(name: str, value: str, text: str) -> Knob:
    return Knob(names.KNOB_UBOOT_ENV, text, names.KNOB_SET, name, value)


@dataclass
class Verified:
    """What `rig try` measured the advisory's knob to gain on power-to-UI (docs/try.md):
    without - with, its interval, the verdict and where the prediction lies, the boots
    of each side, and the try folder holding them."""

    gain_s: float | None
    ci_low_s: float | None
    ci_high_s: float | None
    verdict: str
    prediction: str | None = None
    outcome_kept: bool = True
    pairs: int = 0
    folder: str | None = None
    extra: JSONObject = rest()
