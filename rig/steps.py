"""Steps: what the rig is doing, and for how long, reported from one place to every
subscriber (progress displays, run.json's `timing.steps`), after labgrid's
`labgrid/step.py` (docs/instruments.md, "Steps")."""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, ParamSpec, TypeVar

from rig.model.run import RunStep

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(eq=False)
class Step:
    """One piece of work in progress or done; `parent` is the step it runs inside."""

    title: str
    depth: int
    parent: Step | None
    source: object | None  # the instrument (or other object) doing the work
    args: Mapping[str, Any]
    start_ns: int  # host CLOCK_MONOTONIC
    stop_ns: int | None = None
    exception: BaseException | None = None

    @property
    def duration_s(self) -> float | None:
        return None if self.stop_ns is None else (self.stop_ns - self.start_ns) / 1e9

    def arg(self, name: str) -> Any:
        """The `name` arg of this step or the nearest step it runs inside; None if none."""
        s: Step | None = self
        while s is not None:
            if name in s.args:
                return s.args[name]
            s = s.parent
        return None

    def within(self, other: Step) -> bool:
        """Whether this step runs inside `other` (at any depth)."""
        up = self.parent
        while up is not None:
            if up is other:
                return True
            up = up.parent
        return False


@dataclass(frozen=True)
class StepEvent:
    kind: Literal["start", "stop"]
    step: Step = field(repr=False)
    t_ns: int

    @property
    def duration_s(self) -> float | None:
        """Set on a stop event only."""
        return self.step.duration_s if self.kind == "stop" else None

    @property
    def exception(self) -> BaseException | None:
        """What ended the step, on a stop event; the exception still propagates."""
        return self.step.exception if self.kind == "stop" else None


Subscriber = Callable[[StepEvent], None]

_current: ContextVar[Step | None] = ContextVar("rig_step", default=None)
_lock = threading.Lock()
# Replaced, never mutated: notify() reads it without the lock.
_subscribers: tuple[Subscriber, ...] = ()


def subscribe(callback: Subscriber) -> None:
    global _subscribers
    with _lock:
        _subscribers = (*_subscribers, callback)


def unsubscribe(callback: Subscriber) -> None:
    """Remove one subscription of `callback`; ValueError when it has none."""
    global _subscribers
    with _lock:
        subs = list(_subscribers)
        subs.remove(callback)
        _subscribers = tuple(subs)


@contextlib.contextmanager
def subscribed(callback: Subscriber) -> Iterator[Subscriber]:
    """Subscribe for a scope: a failed cycle or test leaves no subscriber behind."""
    subscribe(callback)
    try:
        yield callback
    finally:
        unsubscribe(callback)


def _notify(event: StepEvent) -> None:
    for callback in _subscribers:
        try:
            callback(event)
        except Exception as e:  # a display's bug must not end a measurement
            warnings.warn(
                f"step subscriber {callback!r} failed on {event.kind} {event.step.title!r}: {e!r}",
                RuntimeWarning,
                stacklevel=2,
            )


def current() -> Step | None:
    """The innermost step running in this context."""
    return _current.get()


@contextlib.contextmanager
def step(title: str, *, source: object | None = None, **args: Any) -> Iterator[Step]:
    """Run the block as a step; an exception is recorded on it and re-raised."""
    parent = _current.get()
    depth = 0 if parent is None else parent.depth + 1
    s = Step(title, depth, parent, source, args, time.monotonic_ns())
    token = _current.set(s)
    _notify(StepEvent("start", s, s.start_ns))
    try:
        yield s
    except BaseException as e:  # Ctrl-C ends a step too: the record says so
        s.exception = e
        raise
    finally:
        s.stop_ns = time.monotonic_ns()
        _current.reset(token)
        _notify(StepEvent("stop", s, s.stop_ns))


#: Where `as_step` leaves its title on the method: tests check which methods report.
TITLE_ATTR = "__step_title__"


def as_step(title: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate an instrument's method: each call is a step whose source is the instance."""

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(func)
        def wrapper(*a: P.args, **kw: P.kwargs) -> R:
            with step(title, source=a[0] if a else None):
                return func(*a, **kw)

        wrapper.__dict__[TITLE_ATTR] = title
        return wrapper

    return decorate


class Recorder:
    """Collects the steps that finish inside `scope` (run.json's `timing.steps`).

    Depth is relative to the scope: 0 for its direct children."""

    def __init__(self, scope: Step) -> None:
        self.scope = scope
        self.done: list[Step] = []

    def __call__(self, event: StepEvent) -> None:
        if event.kind == "stop" and event.step.within(self.scope):
            self.done.append(event.step)  # list.append: atomic across threads

    def to_model(self, origin_ns: int) -> list[RunStep]:
        """run.json's `timing.steps`: in start order, `start_s` from `origin_ns`."""
        return [
            RunStep(s.title, (s.start_ns - origin_ns) / 1e9, s.duration_s,
                    s.depth - self.scope.depth - 1)
            for s in sorted(self.done, key=lambda s: s.start_ns)
        ]  # fmt: skip
