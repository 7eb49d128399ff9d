"""`rig compare BEFORE... -- AFTER...`: did a change make the boot faster, slower, or not
change it, stage by stage, at a stated confidence (docs/compare.md).

Exit code: 0 no stage slower, 1 some stage `slower` (a CI gate), 2 bad input, 3 InfluxDB
failed, 4 no stage slower but some `inconclusive` (the boots cannot tell; 1 with
`--fail-inconclusive`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich import box
from rich.markup import escape
from rich.table import Table

from rig.analysis.choices import BONFERRONI, CORRECTIONS
from rig.commands.common import (
    config_option,
    console,
    emit_json,
    fail,
    fmt_ms,
    fmt_p,
    json_option,
)
from rig.compare.inputs import DEFAULT_WARMUP, Side, stage_names
from rig.compare.sources import load_side
from rig.errors import EXIT_BOARD_FAILED, EXIT_INCONCLUSIVE, EXIT_OK, InputError

if TYPE_CHECKING:
    from rig.compare.stats import Settings, StageComparison

_AFTER = "compare_after"
_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}


class _SplitAtDashes(click.Command):
    """Splits the arguments at the first `--` before click sees them: click would drop
    the `--` and with it where BEFORE ends. Options may stand on either side."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            i = args.index("--")
            before, after = args[:i], args[i + 1 :]
            probe = click.Context(self, resilient_parsing=True)
            super().parse_args(probe, list(before))  # only to count BEFORE's items
            ctx.meta[_AFTER] = len(probe.params.get("specs") or ())
            args = before + after
        return super().parse_args(ctx, args)


def seconds(text: str, what: str) -> float:
    """`50ms`, `0.05`, `0.05s`, `800us` -> seconds."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*(s|ms|us|µs)?\s*", text)
    if not m:
        raise InputError(f"{what} {text!r}: expected a time such as 50ms, 0.05s or 0.05")
    return float(m.group(1)) * _UNITS[m.group(2) or "s"]


_STYLE = {
    "slower": "bold red",
    "faster": "bold green",
    "no_change": "dim",
    "inconclusive": "yellow",
}


def verdict_table(title: str, columns: Sequence[str]) -> Table:
    """The stage and verdict left, the figures right (compare's and cost's tables)."""
    t = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    for name in columns:
        left = name in ("stage", "verdict")
        t.add_column(name, justify="left" if left else "right", no_wrap=left)
    return t


def print_notes(results: Sequence[StageComparison]) -> None:
    for r in results:
        if r.note:
            console.print(f"[yellow]note:[/] {escape(r.name)}: {escape(r.note)}", highlight=False)


def print_comparison(
    results: list[StageComparison], before: Side, after: Side, s: Settings
) -> None:
    conf = f"{1 - s.alpha:.0%}"
    # 80 columns (a pipe, a CI log) hold the verdict columns; medians, counts and boots
    # needed join them on a wider terminal, and are printed below the table otherwise.
    wide = console.width >= 110
    each = f"{results[0].confidence:.1%}" if results else conf
    per = f" ({each} each)" if each != f"{1 - s.alpha:.1%}" else ""
    cols: list[tuple[str, Callable[[StageComparison], str]]] = [("stage", lambda r: r.name)]
    if wide:
        cols += [("before", lambda r: fmt_ms(r.median_before_s))]
        cols += [("after", lambda r: fmt_ms(r.median_after_s))]
    cols += [
        ("diff", lambda r: fmt_ms(r.difference_s, True)),
        ("CI low", lambda r: fmt_ms(r.ci_low_s, True)),
        ("CI high", lambda r: fmt_ms(r.ci_high_s, True)),
        ("p", lambda r: fmt_p(r.p_value)),
        ("verdict", lambda r: f"[{_STYLE[r.verdict]}]{r.verdict}[/]"),
        ("MDD", lambda r: fmt_ms(r.detectable_s)),
    ]
    if wide:
        cols += [("n b/a", lambda r: f"{r.n_before}/{r.n_after}")]
        if s.detect_s is not None:
            cols += [("boots", lambda r: "-" if r.boots_needed is None else str(r.boots_needed))]
    t = verdict_table(f"after - before (ms), {conf} confidence overall{per}", [n for n, _ in cols])
    for r in results:
        t.add_row(*(get(r) for _, get in cols))
    console.print(t)
    if not wide:
        counts = ", ".join(f"{r.name} {r.n_before}/{r.n_after}" for r in results)
        console.print(f"boots before/after: {counts}", highlight=False)
        if s.detect_s is not None:
            need = ", ".join(f"{r.name} {r.boots_needed or '-'}" for r in results)
            console.print(f"boots per side for {s.detect_s * 1e3:g} ms: {need}", highlight=False)
    console.print(
        f"MDD: smallest change these boots detect with {s.power:.0%} power"
        + (f"; boots: per side to detect {s.detect_s * 1e3:g} ms" if s.detect_s else "")
        + f". A verdict needs p < {1 - results[0].confidence if results else s.alpha:.3g}"
        + " and a CI excluding 0"
        + (f" and at least {s.threshold_s * 1e3:g} ms" if s.threshold_s else "")
        + "; inconclusive: these boots could not tell (the note says the boots it needs).",
        highlight=False,
    )
    print_notes(results)
    for side in (before, after):
        for src in side.sources:
            line = f"{side.name}: {escape(src.spec)} ({src.kind}): {len(src.boots)} boot(s) count"
            if src.warmup:
                line += f"; warm-up left out: {escape(', '.join(b.id for b in src.warmup))}"
            if src.excluded:
                shown = ", ".join(f"{i} ({r})" for i, r in src.excluded[:10])
                more = f" and {len(src.excluded) - 10} more" if len(src.excluded) > 10 else ""
                line += f"; excluded: {escape(shown)}{more}"
            console.print(line, highlight=False)


def result_json(
    results: list[StageComparison],
    before: Side,
    after: Side,
    s: Settings,
    warmup: int,
    correction: str,
) -> dict[str, Any]:
    from rig.compare.stats import INCONCLUSIVE, SLOWER

    return {
        "stages": [r.to_json() for r in results],
        "alpha": s.alpha,
        "confidence": 1 - s.alpha,
        "correction": correction,
        "power": s.power,
        "threshold_s": s.threshold_s,
        "detect_s": s.detect_s,
        "warmup": warmup,
        "regressions": [r.name for r in results if r.verdict == SLOWER],
        "inconclusive": [r.name for r in results if r.verdict == INCONCLUSIVE],
        "before": before.to_json(),
        "after": after.to_json(),
    }


@click.command(cls=_SplitAtDashes)
@click.argument("specs", nargs=-1, metavar="BEFORE... -- AFTER...")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="1 - confidence.")
@click.option(
    "--power",
    type=float,
    default=0.8,
    show_default=True,
    help="For --detect and the detectable change.",
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0),
    default=DEFAULT_WARMUP,
    show_default=True,
    help="Boots left out at the start of each soak, folder of runs or query.",
)
@click.option(
    "--detect",
    default=None,
    metavar="TIME",
    help="A change to plan for (e.g. 50ms): boots per side it needs.",
)
@click.option(
    "--threshold",
    default="0",
    metavar="TIME",
    show_default=True,
    help="Smallest change that gets a verdict (e.g. 100ms); smaller ones are no_change.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write a page with both distributions per stage.",
)
@click.option(
    "--correction",
    type=click.Choice(CORRECTIONS),
    default=BONFERRONI,
    show_default=True,
    help="Multiple stages: bonferroni holds --alpha for all verdicts together "
    "(each stage at alpha / stages); none judges each stage at --alpha.",
)
@click.option(
    "--include-warm",
    is_flag=True,
    help="Count boots the report flags as not a true cold boot (rail not off long enough, "
    "or back-powered); by default they are listed as excluded with the reason.",
)
@click.option(
    "--fail-inconclusive",
    is_flag=True,
    help="Exit 1, not 4, when a stage is inconclusive (the boots cannot tell).",
)
@config_option("Rig config: its results_dir holds soak ids, its [influx] the influx: sources.")
@json_option
def compare(
    specs: tuple[str, ...],
    alpha: float,
    power: float,
    warmup: int,
    detect: str | None,
    threshold: str,
    html_path: Path | None,
    correction: str,
    include_warm: bool,
    fail_inconclusive: bool,
    config_path: Path,
    as_json: bool,
) -> None:
    """Compare boots before and after a change: run folders, soak ids or folders, folders
    of runs, or influx:board=B,variant=V,since=7d; BEFORE and AFTER split by `--`."""
    # Here, not at the top: `rig compare --help` needs no numpy or scipy.
    from rig.compare.stats import Settings, compare_all

    ctx = click.get_current_context()
    if _AFTER not in ctx.meta:
        fail("expected BEFORE... -- AFTER... (the two sides split by `--`)", as_json)
    n = ctx.meta[_AFTER]
    try:
        settings = Settings(
            alpha=alpha,
            power=power,
            threshold_s=seconds(threshold, "--threshold"),
            detect_s=seconds(detect, "--detect") if detect is not None else None,
        )
    except ValueError as e:
        fail(str(e), as_json)
    before = load_side("before", specs[:n], warmup, config_path, include_warm)
    after = load_side("after", specs[n:], warmup, config_path, include_warm)
    names = stage_names(before, after)
    results = compare_all(names, before.samples(), after.samples(), settings, correction)
    doc = result_json(results, before, after, settings, warmup, correction)
    if html_path is not None:
        from rig.sinks.html.beforeafter import write_page

        doc["html"] = str(write_page(html_path, results, before, after, settings))
    if as_json:
        emit_json(doc)
    else:
        print_comparison(results, before, after, settings)
        if html_path is not None:
            console.print(f"page: [bold]{escape(doc['html'])}[/]")
    raise SystemExit(exit_code(doc["regressions"], doc["inconclusive"], fail_inconclusive))


def exit_code(
    regressions: Sequence[object], inconclusive: Sequence[object], fail_inconclusive: bool
) -> int:
    """1 on a regression; 4 (1 with --fail-inconclusive) when the boots could not tell
    (`rig compare`'s stages, `rig trend`'s gate): "cannot tell" is not "no change"."""
    if regressions:
        return EXIT_BOARD_FAILED
    if inconclusive:
        return EXIT_BOARD_FAILED if fail_inconclusive else EXIT_INCONCLUSIVE
    return EXIT_OK
