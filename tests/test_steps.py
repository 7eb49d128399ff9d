"""Steps (rig.steps): nesting, durations, errors, subscriptions; and end to end, the
simulated board's run.json `timing.steps` and a soak's progress, both fed by steps."""

from __future__ import annotations

import contextvars
import io
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from rig import steps
from rig.instruments import drivers  # noqa: F401 - registers every driver
from rig.instruments.drivers import load_config
from rig.instruments.registry import ANALYZER, POWER
from rig.instruments.setup import Instruments
from rig.measure.cycle import CYCLE_STEP, run_cycle
from rig.model.summary import Limits
from rig.soak import run as soak_run
from rig.soak.progress import SoakDisplay
from rig.steps import StepEvent
from tests.e2e import make_config, rig_run_json
from tests.step_title import step_title


class Events(list[StepEvent]):
    def __call__(self, event: StepEvent) -> None:
        self.append(event)

    def seen(self) -> list[tuple[str, str, int]]:
        return [(e.kind, e.step.title, e.step.depth) for e in self]


def test_nested_steps_report_depth_order_and_durations() -> None:
    with steps.subscribed(Events()) as events:
        with steps.step("outer", board="x") as outer:
            time.sleep(0.02)
            with steps.step("inner") as inner:
                time.sleep(0.01)
                assert steps.current() is inner
        assert steps.current() is None
    assert events.seen() == [
        ("start", "outer", 0),
        ("start", "inner", 1),
        ("stop", "inner", 1),
        ("stop", "outer", 0),
    ]
    assert inner.parent is outer and inner.within(outer) and not outer.within(inner)
    assert events[0].step.args == {"board": "x"} and inner.arg("board") == "x"
    assert events[0].duration_s is None  # a start event has no duration yet
    assert 0.01 <= events[2].duration_s < events[3].duration_s  # type: ignore[operator]
    assert events[3].duration_s >= 0.03  # type: ignore[operator]
    assert events[3].t_ns == outer.stop_ns and events[0].t_ns == outer.start_ns


def test_an_exception_is_recorded_and_re_raised() -> None:
    with (
        steps.subscribed(Events()) as events,
        pytest.raises(KeyError, match="relay"),
        steps.step("outer"),
        steps.step("power on"),
    ):
        raise KeyError("relay")
    stops = [e for e in events if e.kind == "stop"]
    assert [e.step.title for e in stops] == ["power on", "outer"]
    assert all(isinstance(e.exception, KeyError) for e in stops)
    assert steps.current() is None


def test_a_method_step_names_its_instance_as_source() -> None:
    class Relay:
        @steps.as_step("power on")
        def on(self, level: int = 1) -> int:
            return level * 7

    relay = Relay()
    with steps.subscribed(Events()) as events:
        assert relay.on(level=2) == 14
    assert events.seen() == [("start", "power on", 0), ("stop", "power on", 0)]
    assert events[0].step.source is relay
    assert step_title(Relay.on) == "power on" and step_title(len) is None


def test_unsubscribed_callbacks_hear_nothing_more() -> None:
    events = Events()
    steps.subscribe(events)
    with steps.step("one"):
        pass
    steps.unsubscribe(events)
    with steps.step("two"):
        pass
    assert [e.step.title for e in events] == ["one", "one"]
    with pytest.raises(ValueError):
        steps.unsubscribe(events)
    # A scope that fails still unsubscribes.
    with pytest.raises(RuntimeError), steps.subscribed(events):
        raise RuntimeError
    with steps.step("three"):
        pass
    assert len(events) == 2


def test_a_failing_subscriber_is_warned_about_and_others_still_hear() -> None:
    def broken(_e: StepEvent) -> None:
        raise ZeroDivisionError("display bug")

    with (
        steps.subscribed(broken),
        steps.subscribed(Events()) as events,
        pytest.warns(RuntimeWarning, match="display bug"),
        steps.step("power on"),
    ):
        value = 42
    assert value == 42 and events.seen() == [("start", "power on", 0), ("stop", "power on", 0)]


def test_threads_nest_under_the_step_whose_context_they_copy() -> None:
    titles: dict[str, int] = {}

    def work(title: str) -> None:
        with steps.step(title) as s:
            titles[title] = s.depth

    with steps.step("stop capture") as outer:
        recorder = steps.Recorder(outer)
        with steps.subscribed(recorder):
            ctx = contextvars.copy_context()
            copied = threading.Thread(target=ctx.run, args=(work, "console close"))
            plain = threading.Thread(target=work, args=("elsewhere",))
            for t in (copied, plain):
                t.start()
                t.join()
    assert titles == {"console close": 1, "elsewhere": 0}
    # The recorder keeps only what ran inside its scope, depth 0 = the scope's children.
    assert [(d.title, d.depth) for d in recorder.to_model(outer.start_ns)] == [("console close", 0)]


def test_recorder_lists_steps_in_start_order_from_the_origin() -> None:
    with steps.step("cycle") as cycle:
        recorder = steps.Recorder(cycle)
        with steps.subscribed(recorder):
            with steps.step("a"), steps.step("a.1"):
                pass
            with steps.step("b"):
                time.sleep(0.01)
    listed = recorder.to_model(cycle.start_ns)
    assert [(d.title, d.depth) for d in listed] == [("a", 0), ("a.1", 1), ("b", 0)]
    assert all(d.extra == {} for d in listed)
    assert 0 <= listed[0].start_s <= listed[1].start_s <= listed[2].start_s
    assert listed[2].duration_s is not None and listed[2].duration_s >= 0.01


@pytest.mark.parametrize(
    ("registry", "methods"),
    [
        (POWER, {"on": "power on", "off": "power off"}),
        (ANALYZER, {"arm": "analyzer arm", "stop": "analyzer stop"}),
    ],
)
def test_every_driver_reports_its_steps(registry: Any, methods: dict[str, str]) -> None:
    for name in registry.names():
        cls = registry._drivers[name]
        if name == "none":  # no analyzer: nothing to arm
            continue
        for method, title in methods.items():
            assert step_title(getattr(cls, method)) == title, (name, method)


def by_title(listed: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for d in listed:
        out.setdefault(d["title"], d)  # the first of a title (power off comes twice)
    return out


@pytest.mark.slow
def test_cycle_writes_its_steps_into_run_json_despite_a_broken_subscriber(
    tmp_path: Path,
) -> None:
    cfg = load_config(make_config(tmp_path))

    def broken(_e: StepEvent) -> None:
        raise RuntimeError("display bug")

    with (
        steps.subscribed(broken),
        steps.subscribed(Events()) as events,
        pytest.warns(RuntimeWarning, match="display bug"),
        Instruments(cfg) as bench,
    ):
        result = run_cycle(cfg, bench)
    assert result.ui_seen
    timing = json.loads((result.folder / "run.json").read_text())["timing"]
    assert {"wall_s", "off_hold_s", "boot_s", "overhead_s", "hold_work_s"} <= set(timing)
    listed = timing["steps"]
    seen = by_title(listed)
    assert [d["title"] for d in listed if d["depth"] == 0] == [
        "power off",
        "off-hold",
        "analyzer arm",
        "console open",
        "power on",
        "wait for UI ready",
        "stop capture",
    ] + (["power off"] if cfg.power.power_off_after else [])
    assert {seen[t]["depth"] for t in ("console close", "analyzer stop", "analyzer convert")} == {1}
    # t = 0 is the power-on command, stamped inside the power-on step.
    on = seen["power on"]
    assert on["start_s"] <= 0 <= on["start_s"] + on["duration_s"] < 1.0
    assert seen["off-hold"]["start_s"] < 0 and seen["off-hold"]["duration_s"] >= 0.09
    wait = seen["wait for UI ready"]
    assert wait["start_s"] >= 0 and abs(wait["duration_s"] - timing["boot_s"]) < 0.2
    assert all(0 <= d["duration_s"] < 5 for d in listed)
    # The cycle's own step went to subscribers, not into its own record.
    assert ("stop", CYCLE_STEP, 0) in events.seen() and CYCLE_STEP not in seen


@pytest.mark.slow
def test_rig_run_records_timing_steps(tmp_path: Path) -> None:
    folder = Path(rig_run_json(make_config(tmp_path))["folder"])
    seen = by_title(json.loads((folder / "run.json").read_text())["timing"]["steps"])
    for title in ("power on", "wait for UI ready", "analyzer arm", "analyzer stop"):
        assert 0 <= seen[title]["duration_s"] < 5, title
    assert seen["wait for UI ready"]["duration_s"] > 0.05  # the simulated boot takes time


@pytest.mark.slow
def test_soak_progress_advances_from_steps(tmp_path: Path, monkeypatch: Any) -> None:
    shown: list[tuple[str, float]] = []

    class Watched(SoakDisplay):
        def add(self, rec: dict[str, Any]) -> None:
            super().add(rec)
            task = self.progress.tasks[0]
            shown.append((task.description, task.completed))  # as the redraw shows it

    monkeypatch.setattr(soak_run, "SoakDisplay", Watched)
    cfg = load_config(make_config(tmp_path, off_hold_s=0.05, set_keys={"post_ui_s": 0.02}))
    result = soak_run.run_soak(
        cfg,
        limits=Limits(cycles=2),
        console=Console(file=io.StringIO()),
        show=False,
        handle_signals=False,
    )
    assert result.reason == "completed"
    # Cycle 1 is journaled while cycle 2 holds the board off, cycle 2 after the loop.
    assert [c for _, c in shown] == [1, 2]
    assert shown[0][0] == "cycle 2: hold work"
    assert shown[1][0].startswith("cycle 2: ")
