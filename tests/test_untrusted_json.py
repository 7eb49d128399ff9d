"""Hostile JSON in a run folder, a soak journal or a report, through the real `rig`:
nesting deeper than any parser allows, NaN and infinities, a key given twice, integers of
thousands of digits, lone surrogates, a line of many megabytes. Each is refused with
exit 2 naming the file (and the line of a .jsonl), never an internal error (exit 3) and
never read silently (docs/artifacts.md, "Limits on untrusted input")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from rig.artifacts.rundir import (
    MAX_JSON_BYTES,
    read_report,
    read_run,
    write_report,
    write_run,
)
from rig.errors import ArtifactError
from rig.untrusted import MAX_DEPTH, MAX_LINE_BYTES
from tests.test_errors_cli import CONSOLE_RUN, no_traceback, rig

DEEP = "[" * 100_000 + "]" * 100_000  # RecursionError in Python's own parser


def nest(depth: int) -> str:
    """A JSON value `depth` levels deep, objects and arrays taking turns."""
    opens = ['{"a": ' if k % 2 == 0 else "[" for k in range(depth)]
    return "".join(opens) + "1" + "".join("}" if o.startswith("{") else "]" for o in opens[::-1])


# Name -> (a value, what the error says). Under a key the reader does not know, each but
# the first and the 5000 digits (RecursionError, ValueError: exit 3) is read silently
# today and would be written back as it came: NaN is not JSON to any other tool.
HOSTILE: dict[str, tuple[str, str]] = {
    "recursion": (DEEP, f"nested deeper than {MAX_DEPTH} levels"),
    "past the limit": (nest(MAX_DEPTH + 1), f"nested deeper than {MAX_DEPTH} levels"),
    "NaN": ("NaN", "NaN is not a JSON number"),
    "Infinity": ("-Infinity", "-Infinity is not a JSON number"),
    "1e999": ("1e999", "number 1e999 is out of range"),
    "5000 digits": ("1" + "0" * 5000, "integer 100000000000000000000000... is outside int64"),
    "2**63": (str(2**63), f"integer {2**63} is outside int64"),
    "lone surrogate": ('"b\\udc80"', "lone UTF-16 surrogate"),
}


def fails_with(p: Any, path: Path, why: str, kind: str = "artifact") -> None:
    no_traceback(p)
    assert p.returncode == 2, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    doc = json.loads(p.stdout)
    assert doc["kind"] == kind and doc["error"].startswith(f"{path}"), doc
    assert why in doc["error"] and "internal error" not in doc["error"], doc


def copy_run(tmp_path: Path, name: str = "b") -> Path:
    folder = tmp_path / name
    shutil.copytree(CONSOLE_RUN, folder)
    return folder


def with_value(text: str, value: str, key: str = "newer") -> str:
    """`text` (a JSON object) with `key`'s value replaced by `value`, as raw JSON."""
    doc = json.loads(text)
    doc[key] = "@@"
    return json.dumps(doc).replace('"@@"', value)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_run_json(case: str, tmp_path: Path) -> None:
    value, why = HOSTILE[case]
    folder = copy_run(tmp_path)
    run = folder / "run.json"
    run.write_text(with_value(run.read_text(), value))
    fails_with(rig("analyze", str(folder), "--json"), run, why)


def test_run_json_lone_surrogate_in_a_name_the_report_carries(tmp_path: Path) -> None:
    """Was an internal error (exit 3) when report.html was written as UTF-8."""
    value, why = HOSTILE["lone surrogate"]
    folder = copy_run(tmp_path)
    run = folder / "run.json"
    run.write_text(with_value(run.read_text(), value, "board"))
    fails_with(rig("analyze", str(folder), "--json"), run, why)


def test_run_json_key_twice(tmp_path: Path) -> None:
    """`board` twice: Python keeps the last silently; the rig cannot tell which is meant."""
    folder = copy_run(tmp_path)
    run = folder / "run.json"
    run.write_text(run.read_text().rstrip().removesuffix("}") + ', "board": "other"}')
    fails_with(rig("analyze", str(folder), "--json"), run, "key 'board' given twice")


@pytest.mark.parametrize("case", ["recursion", "5000 digits", "2**63"])
def test_console_jsonl_names_the_line(case: str, tmp_path: Path) -> None:
    value, why = HOSTILE[case]
    folder = copy_run(tmp_path)
    path = folder / "console.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[4] = with_value(lines[4], value, "t_ns") + "\n"
    path.write_text("".join(lines))
    fails_with(rig("analyze", str(folder), "--no-write", "--json"), path, why)
    assert json.loads(rig("analyze", str(folder), "--json").stdout)["error"].startswith(
        f"{path}:5: "
    )


def test_console_jsonl_key_twice(tmp_path: Path) -> None:
    folder = copy_run(tmp_path)
    path = folder / "console.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2].rstrip().removesuffix("}") + ', "t_ns": 5}\n'
    path.write_text("".join(lines))
    p = rig("analyze", str(folder), "--no-write", "--json")
    fails_with(p, path, "key 't_ns' given twice")
    assert json.loads(p.stdout)["error"].startswith(f"{path}:3: ")


def test_a_console_line_of_many_megabytes_is_refused_unread(tmp_path: Path) -> None:
    folder = copy_run(tmp_path)
    path = folder / "console.jsonl"
    with path.open("a") as f:
        f.write('{"t_ns": 1, "data_b64": "' + "A" * (MAX_LINE_BYTES + 4) + '"}\n')
    n = len(path.read_text().splitlines())
    p = rig("analyze", str(folder), "--no-write", "--json")
    fails_with(p, path, f"a line longer than {MAX_LINE_BYTES} bytes")
    assert json.loads(p.stdout)["error"].startswith(f"{path}:{n}: ")


@pytest.mark.parametrize("case", ["recursion", "key twice"])
def test_power_jsonl_names_the_line(case: str, tmp_path: Path) -> None:
    value, why = HOSTILE.get(case, ("", "key 'v' given twice"))
    folder = copy_run(tmp_path)
    path = folder / "power.jsonl"
    good = '{"t_ns": 1, "v": 5.0, "a": 0.1}'
    bad = with_value(good, value) if value else good[:-1] + ', "v": 0.0}'
    path.write_text(f"{good}\n{bad}\n{good}\n")
    p = rig("analyze", str(folder), "--no-write", "--json")
    fails_with(p, path, why)
    assert json.loads(p.stdout)["error"].startswith(f"{path}:2: ")


@pytest.fixture
def analyzed(tmp_path: Path) -> Path:
    folder = copy_run(tmp_path, "analyzed")
    assert rig("analyze", str(folder)).returncode == 0
    return folder


@pytest.mark.parametrize("case", ["recursion", "past the limit", "NaN", "5000 digits"])
def test_report_json_in_rig_report_and_compare(case: str, analyzed: Path, tmp_path: Path) -> None:
    value, why = HOSTILE[case]
    bad = copy_run(tmp_path, "bad")
    shutil.copy(analyzed / "report.json", bad / "report.json")
    path = bad / "report.json"
    path.write_text(with_value(path.read_text(), value))
    fails_with(rig("report", str(bad), "--out", str(tmp_path / "r.html"), "--json"), path, why)
    fails_with(rig("compare", str(bad), "--", str(analyzed), "--json"), path, why)


def test_report_json_key_twice(analyzed: Path, tmp_path: Path) -> None:
    """A second `outcome` would have the report say another outcome than it holds."""
    path = analyzed / "report.json"
    path.write_text(path.read_text().rstrip().removesuffix("}") + ', "outcome": "panic"}')
    p = rig("report", str(analyzed), "--out", str(tmp_path / "r.html"), "--json")
    fails_with(p, path, "key 'outcome' given twice")


@pytest.mark.parametrize("text", ["[1]", '{"outcome": NaN}', "{"])
def test_a_report_json_error_names_the_file_once(text: str, tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(text)
    with pytest.raises(ArtifactError) as e:
        read_report(path)
    assert str(e.value).count(str(path)) == 1, e.value


def test_prune_keeps_the_raw_artifacts_of_an_unreadable_report(analyzed: Path) -> None:
    """rig prune must not crash on it, nor delete what a report it cannot read describes."""
    results = analyzed.parent
    path = analyzed / "report.json"
    path.write_text(with_value(path.read_text(), DEEP))
    p = rig("prune", "--results", str(results), "--raw", "--older-than", "0", "--json")
    no_traceback(p)
    assert p.returncode == 0, p.stdout + p.stderr
    (kept,) = json.loads(p.stdout)["raw_kept"]
    assert kept["folder"] == str(analyzed) and "nested deeper than" in kept["reason"]
    assert (analyzed / "console.jsonl").is_file()


@pytest.mark.parametrize("line", [1, 2])
def test_soak_resume_with_a_deep_journal_line(line: int, tmp_path: Path) -> None:
    soak = tmp_path / "soak"
    soak.mkdir()
    head = json.dumps({"type": "header", "schema": "bootrig.soak/1", "soak_id": "soak"})
    lines = [head, head, '{"type": "end"}']
    lines[line - 1] = '{"type": "header", "x": ' + DEEP + "}"
    (soak / "journal.jsonl").write_text("\n".join(lines) + "\n")
    p = rig("soak", "--resume", str(soak), "--json")
    why = f"{line}: bad journal line (nested deeper than {MAX_DEPTH} levels)"
    fails_with(p, soak / "journal.jsonl", why)


def test_at_the_depth_limit_a_report_and_a_run_round_trip(tmp_path: Path) -> None:
    """A value MAX_DEPTH deep under a key this rig does not know (a newer rig's) is kept
    and written back as it was: the model's codec recurses over it without failing."""
    folder = copy_run(tmp_path)
    deep = json.loads(nest(MAX_DEPTH - 1))
    run_doc = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**run_doc, "newer": deep}))
    p = rig("analyze", str(folder), "--json")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    run = read_run(folder)
    assert run.extra["newer"] == deep
    write_run(folder, run)
    assert read_run(folder) == run
    report_path = folder / "report.json"
    report_doc = json.loads(report_path.read_text())
    report_path.write_text(json.dumps({**report_doc, "newer": deep}))
    report = read_report(report_path)
    write_report(report_path, report)
    assert json.loads(report_path.read_text())["newer"] == deep
    assert read_report(report_path) == report


def test_a_run_json_of_more_than_32_mib(tmp_path: Path) -> None:
    """Within the old 256 MiB bound a run.json of empty arrays took gigabytes to parse."""
    folder = copy_run(tmp_path)
    run = folder / "run.json"
    text = run.read_text().rstrip()
    run.write_text(text.removesuffix("}") + ', "x": [' + "[]," * (MAX_JSON_BYTES // 3) + "[]]}")
    fails_with(rig("analyze", str(folder), "--json"), run, f"more than {MAX_JSON_BYTES}")


def test_a_last_journal_line_the_strict_reader_refuses_is_reported_not_cut(
    tmp_path: Path,
) -> None:
    """Whole lines are not torn tails: resuming must neither drop nor truncate them."""
    soak = tmp_path / "soak"
    soak.mkdir()
    head = {"type": "header", "schema": "bootrig.soak/1", "soak_id": "soak"}
    last = json.dumps({"type": "end", "x": "@@"}).replace('"@@"', "NaN")
    (soak / "journal.jsonl").write_text(f"{json.dumps(head)}\n{last}\n")
    size = (soak / "journal.jsonl").stat().st_size
    p = rig("soak", "--resume", str(soak), "--json")
    fails_with(p, soak / "journal.jsonl", "2: bad journal line (NaN is not a JSON number)")
    assert (soak / "journal.jsonl").stat().st_size == size


def test_a_last_console_record_the_strict_reader_refuses_is_reported_not_dropped(
    tmp_path: Path,
) -> None:
    folder = copy_run(tmp_path)
    path = folder / "console.jsonl"
    lines = path.read_text().splitlines()
    lines[-1] = lines[-1].removesuffix("}") + ', "t_ns": 5}'  # no newline: a tail
    path.write_text("\n".join(lines))
    p = rig("analyze", str(folder), "--no-write", "--json")
    fails_with(p, path, f"{len(lines)}: bad console record (key 't_ns' given twice")
