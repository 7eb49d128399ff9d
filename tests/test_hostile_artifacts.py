"""Hostile and clumsy artifact folders end in a clear error naming file and key (or a
report), never in a traceback, an endless read or an exhausted memory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rig.errors import ArtifactError, RigError
from rig.measure.pipeline import analyze_folder

REAL = Path(__file__).parent / "data" / "real"
WRONG: list[Any] = ["x", -1, 1.5, True, None, [], {}, float("nan")]


def _paths(obj: dict[str, Any], pre: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for k, v in obj.items():
        yield (*pre, k)
        if isinstance(v, dict) and len(pre) < 2:
            yield from _paths(v, (*pre, k))


@pytest.mark.parametrize("boot", ["capture-1", "console-1"])
def test_every_run_json_key_of_every_wrong_type(boot: str, tmp_path: Path) -> None:
    """Each key of a real run.json (three levels deep) set to each wrong type: a report,
    or an error of the rig's hierarchy; nothing else escapes."""
    for name in ("run.json", "console.jsonl", "capture.sr"):
        if (REAL / boot / name).exists():
            shutil.copy(REAL / boot / name, tmp_path / name)
    original = json.loads((REAL / boot / "run.json").read_text())
    escaped = []
    for path in _paths(original):
        for value in WRONG:
            run = json.loads(json.dumps(original))
            table = run
            for k in path[:-1]:
                table = table[k]
            table[path[-1]] = value
            (tmp_path / "run.json").write_text(json.dumps(run))
            try:
                analyze_folder(tmp_path, write=False)
            except RigError:
                pass
            except Exception as e:  # what the test is looking for
                escaped.append((".".join(path), value, f"{type(e).__name__}: {e}"))
    assert not escaped, escaped[:5]


def test_a_wrong_type_names_the_key(tmp_path: Path) -> None:
    shutil.copytree(REAL / "capture-1", tmp_path / "b")
    run = json.loads((tmp_path / "b" / "run.json").read_text())
    run["capture"]["samplerate_hz"] = "1 MHz"
    (tmp_path / "b" / "run.json").write_text(json.dumps(run))
    with pytest.raises(ArtifactError, match=r"run.json: key 'capture.samplerate_hz': expected an"):
        analyze_folder(tmp_path / "b", write=False)


@pytest.mark.parametrize("name", ["capture.sr", "console.jsonl", "run.json", "power.jsonl"])
def test_a_device_in_place_of_an_artifact(name: str, tmp_path: Path) -> None:
    """/dev/zero where a file belongs: an input error (exit 2) at once, not a read that
    fills the memory (the OOM killer ended `rig analyze` before)."""
    folder = tmp_path / "b"
    shutil.copytree(REAL / "capture-1", folder)
    target = folder / name
    target.unlink(missing_ok=True)
    os.symlink("/dev/zero", target)
    p = subprocess.run(
        [sys.executable, "-m", "rig", "analyze", str(folder), "--no-write", "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"{target}: not a regular file" in json.loads(p.stdout)["error"]
