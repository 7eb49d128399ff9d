"""`rig bisect`: boot commit after commit of a repository and name the first one that made
a stage slower (or faster); its exit codes are docs/bisect.md's."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich import box
from rich.markup import escape
from rich.table import Table

from rig.artifacts import rundir
from rig.commands.common import (
    config_option,
    console,
    emit_json,
    engine_option,
    fail,
    fmt_ms,
    fmt_p,
    json_option,
    recover_leftovers,
    spinner,
)
from rig.errors import EXIT_INCONCLUSIVE, EXIT_INPUT, EXIT_OK, InputError
from rig.names import TOTAL
from rig.soak.signals import StopFlag

if TYPE_CHECKING:
    from rig.bisect.explain import Regression
    from rig.bisect.runner import Search

_STYLE = {"bad": "bold red", "good": "bold green", "skip": "yellow", "undecided": "yellow"}
_SEARCH_OPTIONS = ("repo", "good", "bad", "build", "sets", "stage")


def print_result(doc: dict[str, Any]) -> None:
    t = Table(title=f"rig bisect: {doc['stage']}", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("commit", "subject", "role", "boots", "median ms", "verdict", "p"):
        t.add_column(name, justify="right" if name in ("boots", "median ms", "p") else "left")
    for s in doc["steps"]:
        verdict = s["verdict"] or "-"
        if s["build"] != "ok":
            verdict = "skip (build)"
        style = _STYLE.get(s["verdict"] or "", "")
        t.add_row(
            s["commit"][:12], escape(s["subject"][:50]), s["role"], str(s["boots"]),
            fmt_ms(s["median_s"]), f"[{style}]{verdict}[/]" if style else verdict, fmt_p(s["p"]),
        )  # fmt: skip
    console.print(t)
    for s in doc["steps"]:
        for f in s["failed"]:
            console.print(f"failed boot {escape(s['commit'][:12])} {escape(f['run'])}: "
                          f"{escape(f['why'])}", highlight=False)  # fmt: skip
        if s["build"] not in ("ok",):
            console.print(f"skipped {s['commit'][:12]}: {escape(s['build'])}", highlight=False)
    b = doc["budget"]
    line = (
        f"error at most {doc['overall_error']:.3g} overall ({b['steps']} step(s) planned), "
        f"{b['per_step']:.3g} a step, each test at p < {b['per_test']:.2g}"
    )
    if doc["ends"] and doc["ends"]["detectable_s"] is not None:
        line += (
            f"; a step detects {fmt_ms(doc['ends']['detectable_s'])} ms ({b['power']:.0%} power)"
        )
    console.print(line, highlight=False)
    if doc["first_bad"]:
        fb, d = doc["first_bad"], doc["difference"]
        console.print(f"[bold]first bad commit:[/] {fb['commit']} {escape(fb['subject'])}")
        if d:
            console.print(
                f"{escape(doc['stage'])}: {fmt_ms(d['difference_s'], True)} ms "
                f"({d['confidence']:.0%} interval {fmt_ms(d['ci_low_s'], True)} .. "
                f"{fmt_ms(d['ci_high_s'], True)} ms, p {fmt_p(d['p_value'])})",
                highlight=False,
            )
    elif doc["status"] == "range":
        console.print("[yellow]not decided:[/] the first bad commit is one of", highlight=False)
        for c in doc["candidates"]:
            console.print(f"  {c['commit']} {escape(c['subject'])}", highlight=False)
    elif doc["status"] == "refused":
        console.print(f"[bold red]refused:[/] {escape(doc['refused'])}", highlight=False)
    console.print(f"journal: [bold]{escape(doc['folder'])}[/]", highlight=False)


def _start(
    opts: dict[str, Any], config_path: Path, engine: str, explains: Regression | None
) -> Search:
    from rig.bisect import git
    from rig.bisect.explain import night_ends
    from rig.bisect.journal import Header, Journal
    from rig.bisect.runner import Search, search_budget
    from rig.bisect.stage import check_stage
    from rig.instruments.drivers import load_config

    if opts["nights"] is not None:
        if explains is None or opts["good"] or opts["bad"]:
            raise InputError("--nights takes --good and --bad from the nights: give --explain, "
                             "not --good or --bad")  # fmt: skip
        opts["good"], opts["bad"] = night_ends(opts["nights"], explains.time_ns)
        if opts["good"] == opts["bad"]:
            raise InputError(
                f"--nights {opts['nights']}: the change point's night and the night before "
                f"ran the same commit {opts['bad'][:12]}: the change is not in the repository"
            )
    opts["stage"] = check_stage(opts["stage"] or (explains.stage if explains else TOTAL))
    for name in ("repo", "good", "bad", "build"):
        if not opts[name]:
            raise InputError(f"--{name} is needed (or --resume DIR)")
    repo = Path(opts["repo"]).resolve()
    good = git.resolve(repo, opts["good"], "good")
    bad = git.resolve(repo, opts["bad"], "bad")
    commits = git.chain(repo, good, bad)
    argv = shlex.split(opts["build"])
    if not argv:
        raise InputError("--build: an empty command")
    header = Header(
        str(repo), commits, argv, list(opts["sets"]), str(config_path.resolve()),
        opts["stage"], opts["alpha"], opts["end_boots"], opts["batch"], opts["max_boots"],
        opts["build_timeout"], opts["interleave"],
    )  # fmt: skip
    search_budget(header)  # refuse boots too few to decide before any folder is made
    folder = opts["out"]
    if folder is None:
        cfg = load_config(config_path)  # without --set: they name builds not made yet
        rundir.probe_results_dir(cfg.results_dir, f"{cfg.path}: key 'rig.results_dir'")
        _, folder = rundir.new_run_folder(cfg.results_dir, prefix="bisect-")
    if folder.exists() and any(folder.iterdir()):
        raise InputError(f"--out {folder}: not empty (continue a bisect with --resume)")
    return Search(folder, header, Journal.create(folder, header), {}, engine)


def _resume(folder: Path, engine: str, as_json: bool) -> Search:
    from rig.bisect.journal import read
    from rig.bisect.runner import Search

    journal, header, steps = read(folder)
    search = Search(folder, header, journal, steps, engine)
    recover_leftovers(folder / "steps", as_json)  # raw captures of a boot killed mid-way
    return search


@click.command()
@click.option("--repo", type=click.Path(path_type=Path), help="The git repository to search.")
@click.option("--good", help="A commit whose boots are as they should be.")
@click.option("--bad", help="A later commit whose boots are not (its first-parent line).")
@click.option("--build", help="The build command, split like a shell line but run without "
              "one, in the commit's worktree; {worktree}, {commit}, {out} are replaced. "
              "Put what the boot needs into {out}.")  # fmt: skip
@click.option("--build-timeout", type=click.FloatRange(min=1), default=3600.0,
              show_default=True, help="Seconds a build may take, or it failed.")  # fmt: skip
@config_option()
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="Override a config key for every commit, with {out}, {worktree} and {commit} "
              "replaced, e.g. --set 'sim.profile=\"{out}/board.toml\"'.")  # fmt: skip
@click.option(
    "--stage",
    default=None,
    help=f"The stage to search by, or initcall:NAME for one initcall's own duration "
    f"(the boots need initcall_debug) [default: {TOTAL}; with --explain, its stage].",
)
@click.option(
    "--explain",
    "explain_path",
    type=click.Path(path_type=Path),
    default=None,
    help="A `rig trend --fail-on-new --json` output: the bisect explains its first "
    "new regression (its stage, and where --mark puts the answer).",
)
@click.option(
    "--nights",
    type=click.Path(path_type=Path),
    default=None,
    help="With --explain: take --good and --bad from the nightly's records in this "
    "folder (each night's status.json 'commit').",
)
@click.option(
    "--mark",
    is_flag=True,
    help="With --explain: write the answer to the config's [influx] as an annotation "
    "beside the change point (measurement 'bisect').",
)
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="The whole search's error rate (split over its steps).")  # fmt: skip
@click.option("--end-boots", type=click.IntRange(min=2), default=12, show_default=True,
              help="Boots of the good and of the bad end each.")  # fmt: skip
@click.option("--batch", type=click.IntRange(min=1), default=4, show_default=True,
              help="Boots a step takes before each look at its rank test.")  # fmt: skip
@click.option("--max-boots", type=click.IntRange(min=1), default=20, show_default=True,
              help="A step's cap: undecided after this many, the commit is skipped.")  # fmt: skip
@click.option("--interleave/--no-interleave", default=True, show_default=True,
              help="Boot the good and bad ends again beside each step, in turn with its "
              "boots, where that is cheap (the simulator, QEMU).")  # fmt: skip
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="The bisect's folder [default: <results_dir>/bisect-<id>].")  # fmt: skip
@click.option("--resume", "resume_dir", type=click.Path(path_type=Path), default=None,
              help="Continue the bisect in this folder (after a kill or Ctrl-C).")  # fmt: skip
@engine_option
@json_option
def bisect(resume_dir: Path | None, engine: str, as_json: bool, config_path: Path,
           explain_path: Path | None, mark: bool, **opts: Any) -> None:  # fmt: skip
    """Find the commit that made a stage slower: build, boot and rank-test commit by
    commit between a good and a bad one."""
    from rig.bisect import explain, report

    explains = explain.read_regression(explain_path) if explain_path else None
    if mark and explains is None:
        fail("--mark puts the answer beside a change point: give --explain", as_json)
    # --mark's [influx] is checked before the first boot: a search of hours must not end
    # unable to write its answer
    if resume_dir is not None:
        given = [f"--{n}" for n in (*_SEARCH_OPTIONS, "nights") if opts[n] not in (None, ())]
        if given:
            fail(f"--resume takes the search from its journal; leave out {', '.join(given)}",
                 as_json)  # fmt: skip
        search = _resume(resume_dir, engine, as_json)
        influx = explain.influx_settings(Path(search.h.config)) if mark else None
    else:
        influx = explain.influx_settings(config_path) if mark else None
        search = _start(opts, config_path, engine, explains)
    stop = StopFlag()
    with spinner(as_json) as progress:
        task = progress.add_task("starting", total=None)
        with stop.installed():
            result = search.run(
                stop.event,
                lambda t: progress.update(task, description=t),
                lambda t: None if as_json else console.print(escape(t), highlight=False),
            )
    doc = report.result_doc(result)
    if explains is not None:
        doc["explains"] = dataclasses.asdict(explains)
    rundir.write_json(search.folder / report.RESULT_JSON, doc)
    (search.folder / report.RESULT_HTML).write_text(report.result_html(doc))
    if influx is not None and explains is not None and doc["status"] != report.INTERRUPTED:
        # the answer is on disk first: an InfluxError (exit 3, json_option) loses nothing
        explain.mark(doc, explains, influx)
        doc["marked"] = True
        rundir.write_json(search.folder / report.RESULT_JSON, doc)
    if as_json:
        emit_json(doc)
    else:
        print_result(doc)
    if doc["status"] == report.INTERRUPTED:
        raise SystemExit(stop.exit_code)
    codes = {report.FOUND: EXIT_OK, report.RANGE: EXIT_INCONCLUSIVE}
    raise SystemExit(codes.get(doc["status"], EXIT_INPUT))
