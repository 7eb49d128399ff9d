"""The `rig` executable (`rig.cli:entry`, and `python -m rig`). Its top imports only the
signal module: everything else, click and the commands (rig/commands/group.py) included,
loads inside `entry`, where a Ctrl-C is caught."""

from __future__ import annotations

import signal
import sys
from typing import NoReturn


def entry() -> NoReturn:
    """click's main with the documented exit codes (docs/exit-codes.md) for what reaches
    the top: an interrupt, even during the imports, is 130, not click's 1 ("the board
    failed" here); a usage error 2; any other error through `fail`."""
    try:
        code = _run()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # see below
        code = _interrupted(newline=True)
    finally:
        # What remains is Python's shutdown (atexit, waiting for threads), which would
        # print a traceback for a KeyboardInterrupt: a Ctrl-C from here on ends the process
        # as the kernel does, which a shell reports as 130 too.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    raise SystemExit(code)


def _interrupted(newline: bool) -> int:
    # The newline ends the terminal's "^C" line, as click's own Ctrl-C handling does.
    sys.stderr.write(("\n" if newline else "") + "interrupted\n")
    sys.stderr.flush()
    return 130  # rig.errors.EXIT_SIGINT, 128 + SIGINT


def _run() -> int:
    import click

    from rig.commands.group import main
    from rig.errors import EXIT_OK

    try:
        code = main.main(standalone_mode=False)
    except click.exceptions.Abort:  # click's Ctrl-C in a command: it wrote the newline
        return _interrupted(newline=False)
    except click.ClickException as e:  # usage errors: bad input, exit 2
        e.show()
        return e.exit_code
    except click.exceptions.Exit as e:
        return e.exit_code
    except Exception as e:  # a command without --json, or before its options were read
        from rig.commands.common import fail

        fail(e, as_json="--json" in sys.argv[1:])
    # Without standalone mode click returns an explicit exit's code (e.g. --help's 0).
    return code if isinstance(code, int) else EXIT_OK
