"""The rig's one error hierarchy and the exit codes every command shares.

Every error the rig raises on purpose is a `RigError` of one *kind*; the kind, not the
class, decides the exit code, so a command never has to know a module's classes:

| kind              | what went wrong                                              | exit |
|-------------------|--------------------------------------------------------------|------|
| `InputError`      | what the user gave: an argument, a file named on the command | 2    |
|                   | line, a dashboard, a fault spec                              |      |
| `ConfigError`     | an `InputError`: a config file or setting (file, key, found) | 2    |
| `ArtifactError`   | an `InputError`: a stored artifact that cannot be used       | 2    |
|                   | (`run.json`, `capture.sr`, `report.json`, a soak journal)    |      |
| `InstrumentError` | the rig's hardware or its stand-in failed (relay, supply,    | 3    |
|                   | analyzer, console, QEMU, the simulator)                      |      |
| `SinkError`       | where results go failed (InfluxDB, its private server)       | 3    |
| `RigError` itself | the rig's own software failed (sigrok-cli, a decoder)        | 3    |

Config and artifact errors are input errors because both are things handed to the rig
that it cannot use; they keep their own kind so a message and a test can say which.
Instruments and sinks are apart because the user can act on them separately (plug the
relay in, start InfluxDB). The board's own failures are not errors at all: they are a
report's outcome (exit 1), see `rig.commands.common.outcome_exit_code`.

The module-level classes keep the builtin base they had before the hierarchy existed
(`ValueError` for wrong input, `RuntimeError` for things failing), so `except ValueError`
in older code still catches them. No imports: analysis, which must stay pure, may use it.
"""

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
