"""`rig bisect` end to end on the simulated board (issue 24 item 1, the fast variant): a
real git repository whose commits each change a copy of a board profile, built with
`cp`, booted through the rig's own cycle. One commit adds 30 ms to the kernel stage,
an earlier one 0.3 ms (far below what 8 boots a side detect)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.bisect_env import state
from tests.e2e import REPO, make_config

FAST = (REPO / "config" / "boards" / "fast.toml").read_text()
#: (kernel stage ms, subject) of the commits after the good one; index 4 is the culprit.
HISTORY = [
    (120.0, "notes: say what the board is"),
    (120.3, "kernel: a 0.3 ms probe nobody can see"),
    (120.3, "notes: more"),
    (150.3, "kernel: wait 30 ms for the panel"),
    (150.3, "notes: c5"),
    (150.3, "notes: c6"),
    (150.3, "notes: c7"),
    (150.3, "notes: c8"),
]
CULPRIT = 4
FAST_ARGS = ["--end-boots", "8", "--batch", "4", "--max-boots", "8"]


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    return out.stdout.decode().strip()


def _profile(kernel_ms: float) -> str:
    return re.sub(r'(name = "kernel"\nduration_s = )[0-9.]+', rf"\g<1>{kernel_ms / 1000:.4f}", FAST)


def _sci_init(us: int) -> str:
    """The fast board with sci_init taking `us` (its kernel stage as long: the initcall
    takes from the stage's rest, so only initcall_debug's own times see it)."""
    old = 'fn = "sci_init", size = 0x58, us = 2310'
    assert old in FAST, "fast.toml's sci_init moved"
    return FAST.replace(old, f'fn = "sci_init", size = 0x58, us = {us}')


def make_repo(
    tmp: Path, broken: int | None = None, profiles: list[str] | None = None
) -> tuple[Path, list[str]]:
    """The repository, its commits [good, ..., bad]; `broken`: that commit has no
    board.toml (its build fails); `profiles`: each commit's board.toml (default HISTORY's)."""
    repo = tmp / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "bisect@example.org")
    _git(repo, "config", "user.name", "bisect test")
    texts = profiles or [_profile(120.0), *(_profile(ms) for ms, _ in HISTORY)]
    (repo / "board.toml").write_text(texts[0])
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    for i, (_, subject) in enumerate(HISTORY, 1):
        (repo / "notes").write_text(subject)
        if i == broken:
            _git(repo, "rm", "-q", "board.toml")
        else:
            (repo / "board.toml").write_text(texts[i])
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", subject)
    return repo, _git(repo, "rev-list", "--reverse", "HEAD").split()


def bisect_argv(
    tmp: Path, repo: Path, commits: list[str], good: int = 0, bad: int = -1
) -> list[str]:
    config = make_config(tmp)
    return [
        sys.executable, "-m", "rig", "bisect", "--repo", str(repo),
        "--good", commits[good], "--bad", commits[bad],
        "--build", "cp {worktree}/board.toml {out}/board.toml",
        "--config", str(config), "--set", 'sim.profile="{out}/board.toml"',
        "--out", str(tmp / "bisect"), *FAST_ARGS,
    ]  # fmt: skip


def run(argv: list[str], timeout: float = 300) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(
        [*argv, "--json"], capture_output=True, text=True, timeout=timeout, cwd=REPO
    )
    try:
        return proc.returncode, json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise AssertionError(
            f"no JSON (exit {proc.returncode}): {proc.stdout}\n{proc.stderr}"
        ) from None


def test_names_the_30_ms_commit_and_leaves_the_repository_as_found(tmp_path: Path) -> None:
    repo, commits = make_repo(tmp_path)
    # A stale worktree of the user's (its folder deleted): not the bisect's to prune.
    _git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "mine"), commits[1])
    (tmp_path / "mine" / ".git").unlink()
    (tmp_path / "mine").rename(tmp_path / "gone")
    found = state(repo)
    assert found["worktrees"] == 2
    code, doc = run(bisect_argv(tmp_path, repo, commits))
    assert code == 0, doc
    assert doc["status"] == "found"
    assert doc["first_bad"] == {"commit": commits[CULPRIT], "subject": HISTORY[CULPRIT - 1][1]}
    d = doc["difference"]
    assert d["ci_low_s"] > 0.02 and d["ci_high_s"] < 0.04  # about +30 ms, with its interval
    steps = {s["index"]: s for s in doc["steps"]}
    assert steps[0]["role"] == "good_end" and steps[8]["role"] == "bad_end"
    assert steps[CULPRIT]["verdict"] == "bad"
    # On the simulator both ends boot again beside each step, after each of its boots.
    assert all(
        s["reference_boots"] == {"good": s["boots"], "bad": s["boots"]}
        for s in steps.values()
        if s["role"] == "step"
    )
    assert all(s["verdict"] == "good" for i, s in steps.items() if 0 < i < CULPRIT)
    assert all(s["p"] < doc["budget"]["per_test"] for i, s in steps.items() if 0 < i < 8)
    assert len(steps) - 2 <= doc["budget"]["steps"]  # no more steps than ceil(log2 8)
    assert doc["ends"]["differ"] and doc["ends"]["detectable_s"] < 0.01
    assert state(repo) == found
    folder = tmp_path / "bisect"
    assert json.loads((folder / "bisect.json").read_text())["first_bad"] == doc["first_bad"]
    assert commits[CULPRIT][:12] in (folder / "bisect.html").read_text()
    assert (folder / "steps" / f"004-{commits[CULPRIT][:10]}" / "build.log").is_file()


def test_an_initcall_searched_by_its_own_duration(tmp_path: Path) -> None:
    """`--stage initcall:sci_init`: the 30 ms commit lengthens that initcall inside a
    kernel stage of unchanged length, so power-to-UI does not move; the initcall's own
    time (initcall_debug's `returned ... after N usecs`) names it."""
    us = [2310] * CULPRIT + [32310] * (len(HISTORY) + 1 - CULPRIT)
    repo, commits = make_repo(tmp_path, profiles=[_sci_init(u) for u in us])
    code, doc = run([*bisect_argv(tmp_path, repo, commits), "--stage", "initcall:sci_init"])
    assert code == 0, doc
    assert doc["stage"] == "initcall:sci_init"
    assert doc["first_bad"]["commit"] == commits[CULPRIT]
    steps = {s["index"]: s for s in doc["steps"]}
    assert steps[0]["median_s"] == pytest.approx(0.00231, rel=0.05)
    assert steps[8]["median_s"] == pytest.approx(0.03231, rel=0.05)
    assert 0.027 < doc["difference"]["difference_s"] < 0.033

    # An initcall no boot has: every end boot fails with the reason, and the ends are refused.
    argv = [
        *bisect_argv(tmp_path, repo, commits),
        "--stage",
        "initcall:no_such_fn",
        "--end-boots",
        "5",
    ]
    argv[argv.index("--out") + 1] = str(tmp_path / "none")
    code, doc = run(argv)
    assert code == 2, doc
    assert doc["status"] == "refused" and "(the first: no initcall no_such_fn)" in doc["refused"]
    code, doc = run([*bisect_argv(tmp_path, repo, commits), "--stage", "initcall:"])
    assert code == 2 and "name the initcall" in doc["error"], doc


def test_a_failed_build_is_skipped(tmp_path: Path) -> None:
    repo, commits = make_repo(tmp_path, broken=2)
    code, doc = run([*bisect_argv(tmp_path, repo, commits), "--no-interleave"])
    assert code == 0, doc
    assert all(s["reference_boots"] == {} for s in doc["steps"])  # only the ends' own boots
    assert doc["first_bad"]["commit"] == commits[CULPRIT]
    skipped = [s for s in doc["steps"] if s["index"] == 2]
    assert skipped and skipped[0]["verdict"] == "skip" and skipped[0]["boots"] == 0
    assert "exit status" in skipped[0]["build"]


def test_a_skip_that_hides_the_answer_leaves_a_range(tmp_path: Path) -> None:
    repo, commits = make_repo(tmp_path, broken=CULPRIT - 1)
    code, doc = run([*bisect_argv(tmp_path, repo, commits), "--no-interleave"])
    assert code == 4, doc
    assert doc["status"] == "range" and doc["first_bad"] is None
    assert [c["commit"] for c in doc["candidates"]] == commits[CULPRIT - 1 : CULPRIT + 1]


def test_a_failed_boot_is_listed_with_its_class_and_not_counted(tmp_path: Path) -> None:
    repo, commits = make_repo(tmp_path)
    argv = [*bisect_argv(tmp_path, repo, commits), "--set", "sim.faults.panic=0.2"]
    code, doc = run(argv)
    assert code == 0, doc
    assert doc["first_bad"]["commit"] == commits[CULPRIT]
    failed = [f for s in doc["steps"] for f in s["failed"]]
    assert failed and {f["why"] for f in failed} == {"panic"}
    for s in doc["steps"]:
        folder = tmp_path / "bisect" / "steps" / f"{s['index']:03d}-{s['commit'][:10]}"
        own = [f for f in s["failed"] if f["run"].startswith("boot-")]
        assert len(list(folder.glob("boot-*"))) == s["boots"] + len(own)
        if s["role"] != "step":  # an end boots again until its boots that count are there
            assert s["boots"] == 8


def test_ends_that_do_not_differ_are_refused(tmp_path: Path) -> None:
    """Without --out, the journal goes to a new `<results_dir>/bisect-<run id>/`."""
    repo, commits = make_repo(tmp_path)
    argv = bisect_argv(tmp_path, repo, commits, good=5, bad=8)
    out = argv.index("--out")
    code, doc = run(argv[:out] + argv[out + 2 :])
    assert code == 2, doc
    assert doc["status"] == "refused" and "do not differ" in doc["refused"]
    assert not any(s["role"] == "step" for s in doc["steps"])
    folder = Path(doc["folder"])
    assert folder.parent == tmp_path / "results" and (folder / "journal.jsonl").is_file()
    assert re.fullmatch(r"bisect-\d{8}T\d{6}Z-[0-9a-f]{6}", folder.name), folder.name


def test_bad_input_is_refused_before_any_boot(tmp_path: Path) -> None:
    repo, commits = make_repo(tmp_path)
    code, doc = run(bisect_argv(tmp_path, repo, commits, good=3, bad=3))
    assert code == 2 and "same commit" in doc["error"]
    code, doc = run(bisect_argv(tmp_path, repo, commits, good=5, bad=2))
    assert code == 2 and "not an ancestor" in doc["error"]
    assert not (tmp_path / "bisect").exists()
    # An end that does not build is bad input too, found before any boot.
    broken, commits = make_repo(tmp_path / "broken", broken=len(HISTORY))
    code, doc = run(bisect_argv(tmp_path, broken, commits))
    assert code == 2 and doc["error"].startswith(f"--bad {commits[-1][:12]}: build failed")
    assert not list((tmp_path / "bisect").glob("steps/*/boot-*"))


def _journal_steps(folder: Path) -> list[dict[str, Any]]:
    path = folder / "journal.jsonl"
    if not path.is_file():
        return []
    lines = path.read_text().split("\n")[1:-1]
    return [json.loads(ln) for ln in lines]


def _interrupt_after_first_step(argv: list[str], folder: Path, sig: int) -> int:
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while not any(s["role"] == "step" for s in _journal_steps(folder)):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        proc.send_signal(sig)
        return proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _boots(folder: Path) -> dict[str, int]:
    return {p.name: len(list(p.glob("boot-*"))) for p in (folder / "steps").iterdir()}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_resume_after_an_interruption_reaches_the_same_answer(tmp_path: Path, sig: int) -> None:
    repo, commits = make_repo(tmp_path)
    found = state(repo)
    argv = bisect_argv(tmp_path, repo, commits)
    folder = tmp_path / "bisect"
    code = _interrupt_after_first_step(argv, folder, sig)
    assert code == {signal.SIGINT: 130, signal.SIGTERM: 143}.get(sig, -signal.SIGKILL)
    decided = {s["index"]: s for s in _journal_steps(folder)}
    before = _boots(folder)
    if sig != signal.SIGKILL:  # stopped cleanly: nothing of the bisect left in the repository
        assert state(repo) == found
    code, doc = run([sys.executable, "-m", "rig", "bisect", "--resume", str(folder)])
    assert code == 0, doc
    assert doc["first_bad"]["commit"] == commits[CULPRIT]
    assert not list(folder.glob("steps/*/*/capture.bin"))  # a killed boot's raw capture
    after = _boots(folder)
    for i, s in decided.items():  # a decided commit is never booted again
        name = f"{i:03d}-{s['commit'][:10]}"
        assert after[name] == before[name]
    assert state(repo) == found


def test_one_bisect_at_a_time_on_a_folder(tmp_path: Path) -> None:
    import fcntl

    from rig.bisect.journal import Header, Journal

    repo, commits = make_repo(tmp_path)
    header = Header(
        str(repo), commits, ["true"], [], str(make_config(tmp_path)), "power_to_ui",
        0.05, 8, 4, 8, 60.0,
    )  # fmt: skip
    folder = tmp_path / "bisect"
    journal = Journal.create(folder, header)
    with journal.path.open() as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a running bisect holds it
        code, doc = run([sys.executable, "-m", "rig", "bisect", "--resume", str(folder)])
    assert code == 2 and "another `rig bisect` is running" in doc["error"]
    assert not (folder / "steps").exists()  # nothing built or booted


def test_a_bench_that_drifted_since_the_ends_were_booted(tmp_path: Path) -> None:
    """The bench ran 40 ms slower while the ends were booted (a warm room, a busy host):
    the journal says so, and the search resumes from it on today's bench. Each step is
    compared with the ends booted beside it, so it still names the culprit; against all
    the ends' boots, the commits after it would look faster than the bad end: good."""
    from rig.bisect.journal import Header, Journal, StepRecord

    repo, commits = make_repo(tmp_path)
    folder = tmp_path / "bisect"
    header = Header(
        str(repo), commits, ["cp", "{worktree}/board.toml", "{out}/board.toml"],
        ['sim.profile="{out}/board.toml"'], str(make_config(tmp_path)), "kernel",
        0.05, 8, 4, 8, 60.0,
    )  # fmt: skip
    journal = Journal.create(folder, header)
    for index, kernel_ms, role in ((0, 120.0, "good_end"), (8, 150.3, "bad_end")):
        out = folder / "steps" / f"{index:03d}-{commits[index][:10]}"
        out.mkdir(parents=True)
        (out / "board.toml").write_text(_profile(HISTORY[index - 1][0] if index else 120.0))
        times = [(kernel_ms + 40 + 0.1 * k) / 1000 for k in range(24)]
        journal.add(StepRecord(index, commits[index], role, "ok", times))
    code, doc = run([sys.executable, "-m", "rig", "bisect", "--resume", str(folder)])
    assert code == 0, doc
    assert doc["first_bad"]["commit"] == commits[CULPRIT]
    steps = [s for s in doc["steps"] if s["role"] == "step"]
    assert all(s["verdict"] == ("bad" if s["index"] >= CULPRIT else "good") for s in steps)
    assert 0.02 < doc["difference"]["difference_s"] < 0.04  # against the ends beside it
