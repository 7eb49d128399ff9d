"""The truth of a knob on the simulated board: the seconds it removes from each stage
and from power to UI, computed from the profile by planning the boot with and without
it (nominal: every stage at factor 1). `bench/try.py` and `rig try`'s tests compare the
gains they measure with it (docs/simulator.md, "Knobs").

A knob is anything with `kind`, `op`, `name` and `value` as rig.model.knob.Knob has
them: a kernel argument set (`lpj=1495040`, the bare `quiet`) or removed (`rootdelay`),
or a U-Boot variable set (`bootdelay=0`).
"""

from __future__ import annotations

from typing import Protocol

from rig import names
from simboard.knobs import params, words
from simboard.profile import Profile
from simboard.timeline import plan

POWER_TO_UI = "power_to_ui"


class KnobLike(Protocol):
    kind: str
    op: str | None
    name: str | None
    value: str | None


def _without(line: str, name: str) -> str:
    kept = [w for w, (k, _) in zip(words(line), params(line), strict=True) if k != name]
    return " ".join(kept)


def with_knob(profile: Profile, knob: KnobLike) -> Profile:
    """The board with `knob` turned on top of its present settings. A kernel argument
    set replaces any of its name (as `rig try` does); where the profile's own command
    line has one, the rest of that line becomes U-Boot's `bootargs`."""
    s = profile.settings
    if knob.kind == names.KNOB_UBOOT_ENV and knob.op == names.KNOB_SET and knob.name:
        env = {**s.uboot_env, knob.name: knob.value or ""}
        return profile.with_settings(uboot_env=env)
    if knob.kind != names.KNOB_KERNEL_ARG or knob.op not in names.KNOB_OPS or not knob.name:
        raise ValueError(f"no setting the simulated board can take: {knob.kind} {knob.op}")
    env = dict(s.uboot_env)
    bootargs = env.get("bootargs", profile.cmdline)
    if any(k == knob.name for k, _ in params(bootargs)):
        env["bootargs"] = _without(bootargs, knob.name)
    args = _without(s.kernel_args, knob.name)
    if knob.op == names.KNOB_SET:
        arg = knob.name if knob.value is None else f"{knob.name}={knob.value}"
        args = f"{args} {arg}".strip()
    return profile.with_settings(kernel_args=args, uboot_env=env)


def durations(profile: Profile) -> dict[str, float]:
    """Each stage's nominal duration as the board boots with its settings, and
    power_to_ui (the ui_ready toggle)."""
    tl = plan(profile, 0, 0, nominal=True)
    out = {s.name: s.duration_s for s in tl.stages}
    out[POWER_TO_UI] = tl.markers["ui_ready"]
    return out


def knob_gains(profile: Profile, knob: KnobLike) -> dict[str, float]:
    """Seconds the knob removes per stage and from power to UI (negative: it costs)."""
    off, on = durations(profile), durations(with_knob(profile, knob))
    return {k: off[k] - on[k] for k in off}


def knob_truth(profile: Profile, knob: KnobLike) -> float:
    """Seconds the knob removes from power to UI."""
    return knob_gains(profile, knob)[POWER_TO_UI]
