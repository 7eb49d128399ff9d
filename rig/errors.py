"""The rig's one error hierarchy and the exit codes every command shares
(docs/exit-codes.md): the kind of a `RigError`, not its class, decides the code. Input
kinds are `ValueError`s, so `except ValueError` still catches bad input. No imports:
analysis, which must stay pure, may use it."""

from __future__ import annotations

#: The documented exit codes (README "Exit codes", docs/exit-codes.md).
EXIT_OK = 0
EXIT_BOARD_FAILED = 1
EXIT_INPUT = 2
EXIT_RIG_FAILED = 3
#: `rig compare`, `rig trend --fail-on-new`: the boots cannot tell (a verdict `inconclusive`)
EXIT_INCONCLUSIVE = 4
EXIT_SIGINT = 130  # 128 + SIGINT
EXIT_SIGTERM = 143  # 128 + SIGTERM

#: Longest error message printed or written to --json output, in characters.
MAX_MESSAGE = 2000


class RigError(Exception):
    """Something the rig could not do; the message says what and where. Raised directly,
    it means the rig's own software failed (exit 3)."""


class InputError(RigError, ValueError):
    """What the user handed the rig is wrong (exit 2)."""


class ConfigError(InputError):
    """A config file that is wrong; the message names file, key, expected and found."""


class ArtifactError(InputError):
    """An artifact that cannot be used; the message names the file and where."""


class InstrumentError(RigError, RuntimeError):
    """An instrument failed; the message says which one and how (exit 3)."""


class SinkError(RigError, RuntimeError):
    """A place results go (InfluxDB) failed; the message says which and how (exit 3)."""


def exit_code(error: BaseException) -> int:
    """The exit code of an error that ends a command: by kind, 3 for anything else (an
    OSError, a bug): the rig failed, not the board and not the user."""
    if isinstance(error, InputError):
        return EXIT_INPUT
    return EXIT_RIG_FAILED


def kind(error: BaseException) -> str:
    """The kind's name for --json output: input, config, artifact, instrument, sink, rig."""
    for cls, name in (
        (ConfigError, "config"),
        (ArtifactError, "artifact"),
        (InputError, "input"),
        (InstrumentError, "instrument"),
        (SinkError, "sink"),
    ):
        if isinstance(error, cls):
            return name
    return "rig"


def bounded(message: str, limit: int = MAX_MESSAGE) -> str:
    """`message` cut to at most `limit` characters plus a marker saying how much was cut:
    a 52 MB error (one huge console line quoted back) must not flood a terminal or a pipe."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}… ({len(message) - limit} more characters)"
