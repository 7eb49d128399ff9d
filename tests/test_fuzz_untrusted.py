"""Fuzz the rig's untrusted inputs for the class of issue 21: JSON nested to a random depth
(up to far past any parser), random sizes, keys given twice, NaN and infinities, huge
integers, lone surrogates, in run.json, report.json, console.jsonl, power.jsonl and the soak
journal; TOML nested or dotted to random depths in a config; capture metadata with random
duplicate channel names and probe numbers. Through the `rig` command itself (in-process):
exit 2 naming the file, never an internal error.

Examples per test: BOOTRIG_FUZZ_EXAMPLES (default 25 for the command-level tests, four
times that for the parser alone). No example database is written (the tree stays clean).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rig.commands.group import main
from rig.untrusted import MAX_DEPTH, MAX_TOML_DEPTH, parse_json
from tests.e2e import make_config
from tests.test_capture_metadata import with_metadata
from tests.test_errors_cli import CONSOLE_RUN

N = int(os.environ.get("BOOTRIG_FUZZ_EXAMPLES", "25"))


def fuzz(n: int = N) -> Any:
    return settings(
        max_examples=n,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def rig(*args: str) -> tuple[int, dict[str, Any]]:
    """`rig ARGS --json` in this process: its exit code and JSON, never an exception."""
    res = CliRunner().invoke(main, [*args, "--json"])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    doc = json.loads(res.stdout) if res.stdout.strip() else {}
    return res.exit_code, doc


def refused(args: tuple[str, ...], path: Path, line: int | None = None) -> str:
    code, doc = rig(*args)
    where = f"{path}:{line}:" if line else f"{path}:"
    assert code == 2 and doc.get("kind") in ("artifact", "config"), (code, str(doc)[:2000])
    assert doc["error"].startswith(where) and "internal error" not in doc["error"], doc
    return str(doc["error"])


@contextmanager
def copy_of(src: Path) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(src, Path(tmp) / "b")
        yield Path(tmp) / "b"


# One fault a value can carry, and what the refusal says.
FAULTS = {
    "depth": f"nested deeper than {MAX_DEPTH} levels",
    "key twice": "given twice in one object",
    "constant": "is not a JSON number",
    "overflow": "is out of range",
    "integer": "is outside int64",
    "surrogate": "lone UTF-16 surrogate",
}


@st.composite
def hostile(draw: st.DrawFn) -> tuple[str, str]:
    """(a JSON value as text carrying one fault, the fault), nested in random benign
    arrays and objects of random width."""
    fault = draw(st.sampled_from(sorted(FAULTS)))
    if fault == "depth":  # past the limit, sometimes past Python's own recursion limit
        depth = draw(st.integers(MAX_DEPTH + 1, 3 * MAX_DEPTH) | st.integers(900, 100_000))
        cycle = draw(st.lists(st.sampled_from(["[", '{"k": ']), min_size=1, max_size=4))
        opens = (cycle * depth)[:depth]
        core = "".join(opens) + "0" + "".join("]" if o == "[" else "}" for o in reversed(opens))
    elif fault == "key twice":
        k = draw(st.text(max_size=8))
        core = "{" + f"{json.dumps(k)}: 1, {json.dumps(k)}: 2" + "}"
    elif fault == "constant":
        core = draw(st.sampled_from(["NaN", "Infinity", "-Infinity"]))
    elif fault == "overflow":
        core = f"{draw(st.integers(1, 9))}e{draw(st.integers(309, 100_000))}"
    elif fault == "integer":
        big = draw(st.integers(2**63, 10**30) | st.integers(-(10**30), -(2**63) - 1))
        core = draw(st.sampled_from([str(big), "1" + "0" * draw(st.integers(19, 20_000))]))
    else:
        core = '"a' + draw(st.sampled_from(["\\ud800", "\\udfff", "\\udc80\\udc80"])) + 'b"'
    for _ in range(draw(st.integers(0, 5))):  # benign wrapping, within the limit
        pad = draw(st.lists(st.integers(0, 9).map(str), max_size=3))
        core = draw(st.sampled_from([f"[{', '.join([*pad, core])}]", '{"w": ' + core + "}"]))
    return core, fault


@fuzz()
@given(hostile(), st.sampled_from(["board", "newer", "config"]))
def test_run_json(case: tuple[str, str], key: str) -> None:
    value, fault = case
    with copy_of(CONSOLE_RUN) as folder:
        doc = json.loads((folder / "run.json").read_text())
        doc[key] = "@@"
        (folder / "run.json").write_text(json.dumps(doc).replace('"@@"', value))
        why = refused(("analyze", str(folder)), folder / "run.json")
        assert FAULTS[fault] in why, why


@fuzz()
@given(hostile(), st.data())
def test_console_and_power_jsonl(case: tuple[str, str], data: st.DataObject) -> None:
    value, fault = case
    with copy_of(CONSOLE_RUN) as folder:
        name = data.draw(st.sampled_from(["console.jsonl", "power.jsonl"]))
        path = folder / name
        if name == "power.jsonl":
            path.write_text('{"t_ns": 1, "v": 5.0, "a": 0.1}\n' * 3)
        lines = path.read_text().splitlines(keepends=True)
        at = data.draw(st.integers(0, len(lines) - 2))  # not the last: that may be torn
        lines[at] = lines[at].rstrip().removesuffix("}") + f', "x": {value}}}\n'
        path.write_text("".join(lines))
        why = refused(("analyze", str(folder), "--no-write"), path, at + 1)
        assert FAULTS[fault] in why, why


@fuzz()
@given(hostile())
def test_report_json(case: tuple[str, str]) -> None:
    value, fault = case
    with copy_of(CONSOLE_RUN) as folder:
        assert rig("analyze", str(folder))[0] == 0
        path = folder / "report.json"
        text = path.read_text().rstrip()
        path.write_text(text.removesuffix("}") + f', "newer": {value}}}')
        why = refused(("compare", str(folder), "--", str(folder)), path)
        assert FAULTS[fault] in why, why


@fuzz()
@given(hostile(), st.integers(1, 2))
def test_soak_journal(case: tuple[str, str], line: int) -> None:
    value, fault = case
    with copy_of(CONSOLE_RUN) as folder:
        head = {"type": "header", "schema": "bootrig.soak/1", "soak_id": "s"}
        lines = [json.dumps(head)] * 2 + ['{"type": "end"}']
        lines[line - 1] = json.dumps({**head, "x": "@@"}).replace('"@@"', value)
        (folder / "journal.jsonl").write_text("\n".join(lines) + "\n")
        why = refused(("soak", "--resume", str(folder)), folder / "journal.jsonl", line)
        assert FAULTS[fault] in why, why


@fuzz(4 * N)
@given(hostile())
def test_the_parser_refuses_and_never_raises_anything_else(case: tuple[str, str]) -> None:
    value, fault = case
    try:
        parse_json(value)
    except ValueError as e:
        assert FAULTS[fault] in str(e), e
    else:
        raise AssertionError(f"{fault}: read")


benign = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False,
    allow_infinity=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
    max_size=4),
    max_leaves=30,
)  # fmt: skip


@fuzz(4 * N)
@given(benign)
def test_the_parser_reads_strict_json_as_json_does(value: Any) -> None:
    text = json.dumps(value)
    assert parse_json(text) == json.loads(text)
    assert parse_json(text.encode()) == json.loads(text)


@fuzz()
@given(
    st.sampled_from(["array", "table", "dotted", "header", "digits"]),
    st.integers(MAX_TOML_DEPTH + 1, 20_000),
)
def test_config_toml(kind: str, n: int) -> None:
    parts = ".".join(["k"] * n)
    text = {
        "array": "x = " + "[" * n + "]" * n,
        "table": "x = " + "{a = " * n + "1" + "}" * n,
        "dotted": f"{parts} = 1",
        "header": f"[{parts}]",
        "digits": "x = 1" + "0" * (4300 + n),
    }[kind]
    with tempfile.TemporaryDirectory() as tmp:
        config = make_config(Path(tmp))
        config.write_text(text + "\n" + config.read_text())
        why = refused(("run", "--config", str(config)), config)
        assert re.search(r"nested deeper|dotted key|Exceeds the limit", why), why


@st.composite
def probes(draw: st.DrawFn) -> tuple[list[tuple[str, str]], int]:
    """probeN keys (N and name drawn from small pools, so that both repeat) and total."""
    keys = draw(st.lists(st.tuples(st.sampled_from(["1", "2", "3", "01", "8"]),
                st.sampled_from(["power", "bootm", "D5", "uart_tx", "0", ""])),
                min_size=1, max_size=5))  # fmt: skip
    return [(f"probe{n}", name) for n, name in keys], draw(st.integers(1, 8))


@fuzz()
@given(probes())
def test_capture_channel_names(case: tuple[list[tuple[str, str]], int]) -> None:
    """Metadata naming a channel twice, an index twice, an empty name or a channel past
    `total probes` is refused naming the capture; other metadata is read."""
    keys, total = case
    numbers = [int(k[5:]) for k, _ in keys]
    names = {int(k[5:]): v for k, v in keys}
    allnames = [names.get(i + 1, str(i)) for i in range(max(total, *numbers))]
    bad = (
        len(set(numbers)) < len(numbers)
        or "" in names.values()
        or max(numbers) > total
        or len(set(allnames)) < len(allnames)
    )

    def edit(meta: str) -> str:
        head = meta[: meta.index("probe1=")].replace("total probes=8", f"total probes={total}")
        return head + "".join(f"{k}={v}\n" for k, v in keys) + "unitsize=1\n"

    with tempfile.TemporaryDirectory() as tmp:
        folder = with_metadata(Path(tmp), edit)
        code, doc = rig("analyze", str(folder), "--no-write")
        if bad:
            assert code == 2 and doc["error"].startswith(f"{folder / 'capture.sr'}: "), doc
        else:  # read: a report, whatever the channels made of the boot
            assert code in (0, 1, 2) and "error" not in doc, doc
