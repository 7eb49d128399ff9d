"""Reading files the rig did not just write itself: strict, bounded, one clear error
naming the file (docs/artifacts.md, "Limits on untrusted input"). `json` takes NaN and
1e999, lets a key given twice win and recurses on nesting, as `tomllib` does, which is
also quadratic on a long dotted key. Imports only the rig's errors: analysis may use it.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import IO, Any

from rig.errors import ArtifactError, ConfigError, InputError

#: Deepest nesting of objects and arrays read from a JSON file. The rig's own files nest
#: at most 10 levels (a Grafana dashboard); well below the parser's recursion limit, so
#: every reader and writer of the model can recurse over what was read.
MAX_DEPTH = 64
#: Integers outside int64 are nothing the rig writes; numpy could not hold them either.
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
#: One record of a .jsonl (console.jsonl, power.jsonl): the rig writes a few kB a line.
MAX_LINE_BYTES = 16 << 20
#: A config, board profile or budgets file (a real one is a few kB), and its nesting.
MAX_TOML_BYTES = 1 << 20
MAX_TOML_DEPTH = 32


class Refused(ValueError):
    """Valid to Python's parser, but not strict JSON (or TOML) the rig can trust."""


def check_regular(
    path: Path,
    limit: int | None = None,
    error: type[InputError] = ArtifactError,
    *,
    follow: bool = True,
) -> bool:
    """False when `path` does not exist; `error` when it is not a regular file (reading
    /dev/zero or a FIFO would never end) or is larger than `limit`. `follow=False`: a
    symlink is not a regular file (rig prune never reads through one)."""
    try:
        st = os.stat(path, follow_symlinks=follow)
    except FileNotFoundError:
        return False
    except OSError as e:
        raise error(f"{path}: cannot be read: {e.strerror or e}") from None
    if stat.S_ISLNK(st.st_mode):
        raise error(f"{path}: a symlink, not followed")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path}: not a regular file (a device, FIFO or folder)")
    if limit is not None and st.st_size > limit:
        raise error(f"{path}: {st.st_size} bytes, more than {limit} for this file")
    return True


def _constant(name: str) -> Any:
    raise Refused(f"{name} is not a JSON number")


def _float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise Refused(f"number {text[:40]} is out of range")
    return v


def _int(text: str) -> int:
    v = int(text) if len(text) <= 20 else None  # int() of 4,300 digits raises, slowly
    if v is None or not MIN_INT <= v <= MAX_INT:
        raise Refused(f"integer {text[:24]}{'...' if len(text) > 24 else ''} is outside int64")
    return v


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise Refused(f"key {twice!r} given twice in one object")
    return obj


def too_deep(obj: Any, limit: int) -> bool:
    """True when `obj` nests lists/dicts deeper than `limit` (a scalar is depth 0).
    Depth first with one iterator a level: neither recursion nor memory beyond `limit`
    entries, however wide the document."""
    if not isinstance(obj, dict | list):
        return False
    if limit < 1:
        return True
    stack = [iter(obj.values() if isinstance(obj, dict) else obj)]
    while stack:
        for v in stack[-1]:
            if isinstance(v, dict | list):
                if len(stack) >= limit:
                    return True
                stack.append(iter(v.values() if isinstance(v, dict) else v))
                break
        else:
            stack.pop()
    return False


_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def parse_json(data: bytes | str) -> Any:
    """Strict JSON (RFC 8259, UTF-8) as plain data, or ValueError saying why: never a
    RecursionError, never NaN or infinity, never a key that silently shadows another."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        obj = json.loads(
            text,
            parse_constant=_constant,
            parse_float=_float,
            parse_int=_int,
            object_pairs_hook=_object,
        )
    except RecursionError:
        raise Refused(f"nested deeper than {MAX_DEPTH} levels") from None
    except MemoryError:
        raise Refused("too large to hold in memory") from None
    if too_deep(obj, MAX_DEPTH):
        raise Refused(f"nested deeper than {MAX_DEPTH} levels")
    if _SURROGATE.search(text):  # a lone \\udXXX would fail every later write as UTF-8
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise Refused("a string holds a lone UTF-16 surrogate (\\ud800-\\udfff)") from None
    return obj


def load_json(data: bytes | str, where: str, error: type[InputError] = ArtifactError) -> Any:
    """`parse_json`, its ValueError as `error` naming `where` (a file, or file:line)."""
    try:
        return parse_json(data)
    except ValueError as e:
        raise error(f"{where}: not valid JSON: {e}") from None


def read_json_file(path: Path, limit: int, error: type[InputError] = ArtifactError) -> Any:
    """A whole JSON file, at most `limit` bytes, as plain data; `error` names the file."""
    if not check_regular(path, limit, error):
        raise error(f"{path}: missing")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise error(f"{path}: cannot be read: {e.strerror or e}") from None
    return load_json(data, str(path), error)


def read_line(f: IO[bytes], where: str, limit: int = MAX_LINE_BYTES) -> bytes:
    """The next line of a .jsonl (b"" at the end), refusing one longer than `limit`
    before it is all in memory. `where`: the file."""
    line = f.readline(limit + 1)
    if len(line) > limit:
        raise ArtifactError(f"{where}: a line longer than {limit} bytes; not a record")
    return line


# Strings and comments, so that what is left of a TOML text is its keys and values.
_TOML_SKIP = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'
)
# A dotted key of more than MAX_TOML_DEPTH parts (each word tried once: linear time).
_TOML_LONG_KEY = re.compile(rf"(?<![\w-])(?:[\w-]++\s*+\.\s*+){{{MAX_TOML_DEPTH}}}")


def parse_toml(text: str) -> dict[str, Any]:
    """TOML as plain data, or ValueError saying why: never a RecursionError, nothing
    nested deeper than `MAX_TOML_DEPTH`, no key long enough to make tomllib quadratic."""
    if len(text) > MAX_TOML_BYTES:
        raise Refused(f"more than {MAX_TOML_BYTES} characters; not a config")
    if _TOML_LONG_KEY.search(_TOML_SKIP.sub("s", text)):
        raise Refused(f"a dotted key of more than {MAX_TOML_DEPTH} parts")
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise Refused(f"nested deeper than {MAX_TOML_DEPTH} levels") from None
    except tomllib.TOMLDecodeError:
        raise
    except ValueError as e:  # an integer of thousands of digits
        raise Refused(str(e).split(":")[0]) from None
    if too_deep(data, MAX_TOML_DEPTH):
        raise Refused(f"nested deeper than {MAX_TOML_DEPTH} levels")
    return data


def read_toml(f: IO[bytes], where: str) -> dict[str, Any]:
    """A config from an open file (a pipe too), at most MAX_TOML_BYTES; ConfigError
    names `where`."""
    raw = f.read(MAX_TOML_BYTES + 1)
    if len(raw) > MAX_TOML_BYTES:
        raise ConfigError(f"{where}: more than {MAX_TOML_BYTES} bytes; not a config")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{where}: not UTF-8 text (byte offset {e.start})") from None
    try:
        return parse_toml(text)
    except ValueError as e:  # TOMLDecodeError included
        raise ConfigError(f"{where}: not valid TOML: {e}") from None
