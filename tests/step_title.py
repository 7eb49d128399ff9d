"""Which instrument methods report a step, for tests to check (rig.steps.as_step)."""

from __future__ import annotations

from rig.steps import TITLE_ATTR


def step_title(func: object) -> str | None:
    """The title `as_step` gave `func`, None when it reports no step."""
    return getattr(func, TITLE_ATTR, None)
