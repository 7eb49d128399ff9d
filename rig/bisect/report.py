"""The bisect's result as a document (bisect.json, `--json`) and a modest HTML page."""

from __future__ import annotations

import html
import statistics
from typing import Any

from rig.bisect.journal import SCHEMA
from rig.bisect.runner import Result, ms

FOUND, RANGE, REFUSED, INTERRUPTED = "found", "range", "refused", "interrupted"
RESULT_JSON = "bisect.json"
RESULT_HTML = "bisect.html"


def status(r: Result) -> str:
    if r.interrupted:
        return INTERRUPTED
    if r.refused:
        return REFUSED
    return FOUND if r.found is not None else RANGE


def _commit(r: Result, i: int) -> dict[str, str]:
    return {"commit": r.header.commits[i], "subject": r.subjects[i]}


def result_doc(r: Result) -> dict[str, Any]:
    steps = []
    for i in sorted(r.steps):
        s = r.steps[i]
        steps.append({
            "index": i, **_commit(r, i), "role": s.role, "build": s.build,
            "boots": len(s.times), "failed": [{"run": a, "why": b} for a, b in s.failed],
            "reference_boots": {side: len(t) for side, t in s.ref.items()},
            "median_s": round(statistics.median(s.times), 9) if s.times else None,
            "verdict": s.verdict, "p": s.p,
        })  # fmt: skip
    first = r.found
    return {
        "schema": SCHEMA,
        "status": status(r),
        "folder": str(r.folder),
        "repo": r.header.repo,
        "good": _commit(r, 0),
        "bad": _commit(r, len(r.header.commits) - 1),
        "commits": len(r.header.commits) - 1,
        "stage": r.header.stage,
        "budget": r.budget.to_json(),
        "overall_error": r.overall_error,
        "ends": r.ends.to_json() if r.ends else None,
        "interleave": r.header.interleave,
        "refused": r.refused,
        "first_bad": _commit(r, first) if first is not None else None,
        "candidates": [_commit(r, i) for i in r.candidates],
        "difference": r.difference.to_json() if r.difference else None,
        "steps": steps,
    }


def result_html(doc: dict[str, Any]) -> str:
    e = html.escape
    if doc["first_bad"]:
        fb = doc["first_bad"]
        head = f"First bad commit: <code>{e(fb['commit'][:12])}</code> {e(fb['subject'])}"
        d = doc["difference"]
        if d:
            head += (
                f"<br>{e(doc['stage'])}: {ms(d['difference_s'], True)} "
                f"({d['confidence']:.0%} interval {ms(d['ci_low_s'], True)} .. "
                f"{ms(d['ci_high_s'], True)})"
            )
    elif doc["status"] == RANGE:
        head = "Not decided: the first bad commit is one of " + ", ".join(
            f"<code>{e(c['commit'][:12])}</code>" for c in doc["candidates"]
        )
    else:
        head = e(f"{doc['status']}: {doc['refused'] or ''}")
    rows = "".join(
        "<tr>" + "".join(f"<td>{e(str(x))}</td>" for x in (
            s["commit"][:12], s["subject"], s["role"], s["build"], s["boots"],
            ms(s["median_s"]), s["verdict"] or "-", "-" if s["p"] is None else f"{s['p']:.2g}",
            ", ".join(f"{f['run']}: {f['why']}" for f in s["failed"]),
        )) + "</tr>"
        for s in doc["steps"]
    )  # fmt: skip
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>rig bisect</title>"
        "<style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:left}"
        "</style></head><body>"
        f"<h1>rig bisect: {e(doc['stage'])}</h1><p>{head}</p>"
        f"<p>{doc['commits']} commits; error at most {doc['overall_error']:.3g} overall, "
        f"{doc['budget']['per_step']:.3g} a step</p>"
        "<table><tr><th>commit</th><th>subject</th><th>role</th><th>build</th><th>boots</th>"
        "<th>median</th><th>verdict</th><th>p</th><th>failed boots</th></tr>"
        f"{rows}</table></body></html>\n"
    )
