"""The chaos bench's account: what each cycle should have been classified as, from the
evidence the bench recorded when it struck (never from the rig's own verdict), and what
was lost.

Per kind (docs/soak.md says why each is so):
- SIGKILL: the cycle in flight is `rig_error` unless its run.json already said the
  capture was complete (`completed_utc`) when the rig died: then it is analyzed on
  resume and is what the board did. Its folder is looked at after the kill, when
  nothing can change it any more.
- SIGTERM at host time T: the cycle in flight is `interrupted` if the board's UI tag
  came after T (truth.json); what the board did if it came more than MARGIN_S before T;
  either in between (the tag still on its way to the rig).
- full disk over [A, B]: a cycle whose artifacts were written within it entirely is
  `rig_error` (its run.json cannot be written before power-on); one it touched, before
  or during its analysis, may be `rig_error` or what the board did.
- relay port gone during cycle k's boot: k is `rig_error` (its closing off command,
  `[power] power_off_after`, the default, fails: an instrument raised during the
  cycle); k+1 is what the board did (the soak reopened its instruments after the error).
- a slow analyzer start, InfluxDB down: what the board did.
What the board did is the simulator's truth (truth.json; no board faults are injected,
so `ok`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness.soak import expected, journal
from rig.config.influx import InfluxSettings
from rig.sinks.influx.client import Client, InfluxError
from tests.sample_report import stored_run_ids

#: SIGTERM this close after the UI tag: the tag may not have reached the rig yet.
MARGIN_S = 0.05
#: A folder is seen by the bench's poll at most this late.
POLL_S = 0.03
#: How long after the next cycle's start a cycle's analysis may still write.
ANALYSIS_S = 1.5
RIG_ERROR, INTERRUPTED = "rig_error", "interrupted"


@dataclass
class Evidence:
    """One fault as the bench struck it."""

    kind: str
    t_ns: int
    end_ns: int | None = None  # faults that last: disk full, InfluxDB down
    folder: str | None = None  # the cycle in flight when it struck
    state: str | None = None  # SIGKILL: no_run, running, completed (its folder after)
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if v not in (None, {})}


def truth_outcome(folder: Path) -> tuple[str | None, int | None]:
    """What the board did (None: no truth) and the host time its UI tag was due."""
    try:
        boots = json.loads((folder / "truth.json").read_text())["boots"]
    except (OSError, ValueError, KeyError):
        return None, None
    if not boots:
        return None, None
    boot = boots[0]
    ui = boot.get("markers", {}).get("ui_ready")
    ui_ns = boot["power_edge_ns"] + round(ui * 1e9) if ui is not None else None
    return expected(boot.get("fault")), ui_ns


def allowed(
    name: str,
    folder: Path,
    order: list[str],
    seen: dict[str, int],
    ends: dict[str, int],
    evidence: list[Evidence],
) -> tuple[set[str], list[str]]:
    """The outcomes the evidence allows for cycle `name`, and which faults touched it."""
    base, ui_ns = truth_outcome(folder)
    board = {base} if base else set()
    i = order.index(name)
    start = seen[name] - round(POLL_S * 1e9)
    end = seen[order[i + 1]] if i + 1 < len(order) else ends.get(name, start)
    out = board
    why = []
    for ev in evidence:
        if ev.kind == "sigkill" and ev.folder == name:
            out = board if ev.state == "completed" else {RIG_ERROR}
        elif ev.kind == "sigterm" and ev.folder == name:
            if ui_ns is None or ev.t_ns < ui_ns:
                out = {INTERRUPTED}
            elif ev.t_ns > ui_ns + MARGIN_S * 1e9:
                out = board
            else:
                out = board | {INTERRUPTED}
        elif ev.kind == "disk_full" and ev.end_ns is not None:
            if ev.t_ns <= start and end <= ev.end_ns:
                out = {RIG_ERROR}
            elif ev.t_ns <= end + ANALYSIS_S * 1e9 and ev.end_ns >= start:
                out = out | {RIG_ERROR}
            else:
                continue
        elif ev.kind == "relay_lost" and ev.folder == name:
            out = {RIG_ERROR}
        elif not (ev.kind == "analyzer_slow" and ev.folder == name):
            continue
        why.append(ev.kind)
    return out, why


def classified(soak: Path) -> tuple[dict[str, list[str]], dict[str, dict[str, Any]]]:
    """run_id -> the journal's outcomes for it (one, unless doubled), and its cycle line."""
    outcomes: dict[str, list[str]] = {}
    lines: dict[str, dict[str, Any]] = {}
    for r in journal(soak):
        if r.get("type") == "cycle":
            outcomes.setdefault(r["run_id"], []).append(str(r["outcome"]))
            lines[r["run_id"]] = r
        elif r.get("type") == INTERRUPTED:
            outcomes.setdefault(r["run_id"], []).append(INTERRUPTED)
    return outcomes, lines


def influx_boots(url: str, database: str) -> list[str]:
    try:
        with Client(InfluxSettings(url=url, database=database)) as c:
            return stored_run_ids(c, database)
    except InfluxError:
        return []


def account(
    soak: Path,
    order: list[str],
    seen: dict[str, int],
    ends: dict[str, int],
    evidence: list[Evidence],
    url: str,
    database: str,
) -> dict[str, Any]:
    """runs, classified correctly, misclassified, lost (with why), for the soak folder."""
    folders = {p.name for p in soak.iterdir() if p.is_dir() and not p.name.startswith(".")}
    outcomes, lines = classified(soak)
    stored = set(influx_boots(url, database))
    names = [n for n in order if n in folders]
    runs = sorted(folders | set(outcomes), key=lambda n: (n not in seen, seen.get(n, 0), n))
    correct, wrong, lost = 0, [], []
    for name in runs:
        got = outcomes.get(name, [])
        folder = soak / name
        if name not in folders:  # the cycle could not make its folder: a full disk?
            t_ns = lines.get(name, {}).get("t_ns")
            full = any(
                ev.kind == "disk_full" and isinstance(t_ns, int) and ev.end_ns is not None
                and ev.t_ns - POLL_S * 1e9 <= t_ns <= ev.end_ns + ANALYSIS_S * 1e9
                for ev in evidence
            )  # fmt: skip
            if got != [RIG_ERROR]:
                lost.append(f"{name}: journaled {got}, no folder")
            elif full:
                correct += 1
            else:
                wrong.append(f"{name}: rig_error without a folder, no disk full then")
            continue
        if not got:
            lost.append(f"{name}: no journal line")
            continue
        if len(got) > 1:
            lost.append(f"{name}: journaled {len(got)} times ({got})")
        report = folder / "report.json"
        has_run = (folder / "run.json").is_file()
        if has_run and got[0] != INTERRUPTED and not report.is_file():
            lost.append(f"{name}: run.json but no report.json")
        elif report.is_file():
            said = json.loads(report.read_text()).get("outcome")
            if said != got[0] and got[0] != INTERRUPTED:
                wrong.append(f"{name}: journal {got[0]}, report {said}")
                continue
            if name not in stored:
                lost.append(f"{name}: no boot point in InfluxDB")
        if name not in seen:  # the bench never saw it appear: no evidence to judge by
            wrong.append(f"{name}: {got[0]}, folder not seen by the bench")
            continue
        ok, why = allowed(name, folder, names, seen, ends, evidence)
        if got[0] in ok:
            correct += 1
        else:
            faults = ", ".join(why) or "no fault"
            wrong.append(f"{name}: {got[0]}, expected {'/'.join(sorted(ok)) or '?'} ({faults})")
    return {"runs": len(runs), "classified_correctly": correct, "misclassified": wrong,
            "lost": lost}  # fmt: skip
