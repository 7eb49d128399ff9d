"""Stage boundaries resolved from events; durations with source and uncertainty. A marker
takes its hook's event, else the config's console pattern, a landmark, or in an
initramfs boot kernel_init's event (docs/analysis.md, "Boundaries without hooks").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rig.analysis.events import Timebase, interval_uncertainty, line_event
from rig.analysis.kernelid import KernelId, identify
from rig.analysis.landmark_calibration import Choice
from rig.analysis.landmarks import LANDMARKS, landmark_events
from rig.analysis.lines import Line
from rig.analysis.visibility import LAYERS, Visibility, visibility
from rig.model import report as model
from rig.model.landmarks import LandmarkCalibrations, LandmarkUse
from rig.model.report import Event
from rig.model.stagespec import Boundary, StageSpec

INITRAMFS = "no root mount (initramfs)"


@dataclass(frozen=True)
class Resolution:
    """How a boundary was found, or why not."""

    event: Event | None
    how: str  # hook | console | landmark | initramfs | hidden | unseen
    short: str | None = None  # for the stage table
    note: str | None = None  # a sentence for analysis.notes
    broken: str | None = None  # evidence that the boundary's hook exists and did not fire
    marker: str | None = None
    choice: Choice | None = None  # a landmark's calibration


@dataclass(frozen=True)
class Stage:
    name: str
    start: Event | None
    end: Event | None
    start_res: Resolution | None = None
    end_res: Resolution | None = None

    @property
    def note(self) -> str | None:
        shorts = [r.short for r in (self.start_res, self.end_res) if r and r.short]
        return "; ".join(dict.fromkeys(shorts)) or None

    def to_model(self) -> model.Stage:
        s, e = self.start, self.end
        u = None
        if s and e:
            u = 0.0 if s is e else interval_uncertainty(s, e)  # one event: empty by definition
        return model.Stage(
            name=self.name,
            start_s=s.t_s if s else None,
            end_s=e.t_s if e else None,
            duration_s=(e.t_s - s.t_s) if s and e else None,
            source="+".join(dict.fromkeys(x.source for x in (s, e) if x)) or None,
            uncertainty_s=u,
            start=_boundary(s),
            end=_boundary(e),
            note=self.note,
        )


def _boundary(ev: Event | None) -> model.Boundary | None:
    if ev is None:
        return None
    return model.Boundary(ev.name, ev.source, ev.uncertainty_s, ev.extra.get("landmark"))


def _pattern_event(pattern: str, lines: list[Line], tb: Timebase) -> Event | None:
    rx = re.compile(pattern)
    line = next((ln for ln in lines if rx.search(ln.text)), None)
    return line_event(f"console:{pattern}", line, tb) if line else None


def _ms(s: float) -> str:
    return f"{s * 1e3:.1f} ms"


class _Resolver:
    def __init__(self, events: list[Event], lines: list[Line], tb: Timebase) -> None:
        self.events, self.lines, self.tb = events, lines, tb
        self.vis: Visibility = visibility(lines, events)
        self.kernel: KernelId = identify(lines)
        # Unknown pacing (too few bytes to tell): landmarks take the middle of both cases.
        p = tb.host.pacing
        paced = None if p is None or p.verdict == "unknown" else p.paced
        self.landmarks = landmark_events(lines, tb, tb.host.char_s, paced, self.kernel)
        self.cache: dict[Boundary, Resolution] = {}

    def get(self, b: Boundary) -> Resolution:
        if b not in self.cache:
            self.cache[b] = self._resolve(b)
        return self.cache[b]

    def _resolve(self, b: Boundary) -> Resolution:
        if b.kind == "power":
            return Resolution(next((e for e in self.events if e.name == "power"), None), "hook")
        if b.kind == "console":
            return Resolution(_pattern_event(b.value, self.lines, self.tb), "console")
        return self._marker(b)

    def _broken(self, marker: str) -> str | None:
        layer = LAYERS[marker]
        evidence = self.vis.hooks.get(layer)
        if evidence is None or (marker == "do_mount_root" and self.vis.initramfs):
            return None
        return f"{marker}: neither GPIO edge nor tag although the {layer} has hooks ({evidence})"

    def _marker(self, b: Boundary) -> Resolution:
        m = b.value
        ev = min(
            (e for e in self.events if e.name == m), key=lambda e: e.uncertainty_s, default=None
        )
        if ev is not None:
            return Resolution(ev, "hook")
        broken = self._broken(m)
        if b.fallback and (ev := _pattern_event(b.fallback, self.lines, self.tb)):
            note = f"{m}: no GPIO edge and no tag; the configured console pattern stands in"
            return Resolution(ev, "console", f"console {b.fallback!r}", note, broken)
        if (lm := self.landmarks.get(m)) is not None:
            note = self._landmark_note(m, lm.event, lm.choice)
            return Resolution(lm.event, "landmark", "landmark", note, broken, choice=lm.choice)
        if m == "do_mount_root" and self.vis.initramfs:
            init = self.get(Boundary("marker", "kernel_init"))
            note = (
                f"do_mount_root: {INITRAMFS}: the kernel ran init from its initramfs "
                f"({self.vis.initramfs!r}) and mounted nothing, so the kernel stage runs to "
                "kernel_init and rootfs_mount is empty"
            )
            return Resolution(init.event, "initramfs", INITRAMFS if init.event else None, note)
        if self.vis.tags_hidden and LAYERS[m] != "bootloader":
            # One note for all of them (stage_notes): the reason is the same.
            return Resolution(None, "hidden", "hidden by quiet", self.vis.tags_hidden, broken, m)
        return Resolution(None, "unseen", None, broken, broken)

    def _landmark_note(self, marker: str, ev: Event, choice: Choice) -> str:
        key = ev.extra["landmark"]
        lm = next(x for x in LANDMARKS if x.key == key)
        cal = choice.calibration
        wider = ""
        if choice.widened_s:
            # (No "console" here: report.html shows the notes that say it.)
            kernel = (
                "no `Linux version` banner names the kernel"
                if self.kernel.key is None
                else f"{self.kernel} has no calibration of its own"
            )
            wider = f"; {kernel}: {cal.key}'s, widened by {_ms(choice.widened_s)}"
        return (
            f"{marker}: no GPIO edge and no tag, so {lm.message} stands in ({lm.when}; "
            f"{_ms(ev.extra['offset_s'])} from the hook, ± {_ms(ev.uncertainty_s)} with the "
            f"offset's spread calibrated on {cal.target_of(key)}, {choice.offset.n} boots"
            f"{wider})"
        )


def build_stages(
    specs: tuple[StageSpec, ...], events: list[Event], lines: list[Line], tb: Timebase
) -> tuple[list[Stage], LandmarkCalibrations | None]:
    """The stages, and the calibrations of the landmarks they took (None: no landmark)."""
    r = _Resolver(events, lines, tb)
    out = []
    for s in specs:
        a, b = r.get(s.start), r.get(s.end)
        out.append(Stage(s.name, a.event, b.event, a, b))
    return out, _calibrations(out, r.kernel)


def _calibrations(stages: list[Stage], kernel: KernelId) -> LandmarkCalibrations | None:
    used: dict[str, LandmarkUse] = {}
    for res in (r for s in stages for r in (s.start_res, s.end_res)):
        if res is None or res.choice is None or res.event is None:
            continue
        key, c = res.event.extra["landmark"], res.choice
        cal = c.calibration
        used[res.event.name] = LandmarkUse(
            res.event.name, key, cal.key, cal.target_of(key), c.offset.n, c.widened_s
        )
    if not used:
        return None
    return LandmarkCalibrations(kernel.version, kernel.arch, list(used.values()))


def stage_notes(stages: list[Stage]) -> list[str]:
    """analysis.notes: how each boundary that had no hook of its own was found, or why
    it was not seen."""
    notes: list[str] = []
    hidden: dict[str, str] = {}  # marker -> why
    for s in stages:
        for res in (s.start_res, s.end_res):
            if res is None:
                continue
            if res.how == "hidden" and res.marker and res.note:
                hidden[res.marker] = res.note
                continue
            for text in (res.note, res.broken):
                if text and text not in notes:
                    notes.append(text)
    if hidden:
        names = ", ".join(hidden)
        notes.append(
            f"{names}: not seen: {next(iter(hidden.values()))}. A capture with the GPIO, "
            '`{ marker = "<name>", console = "<a line the target prints anyway>" }` in the '
            "stage list, or `loglevel=6` instead of `quiet`, gives them"
        )
    return notes
