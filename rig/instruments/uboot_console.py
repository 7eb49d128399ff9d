"""U-Boot environment changes through the console, for any board (docs/uboot-env.md):
power-cycle, stop autoboot, `printenv` the originals, journal them, `setenv` + `saveenv`;
afterwards, on an error or on Ctrl-C/SIGTERM too, another power cycle puts the originals
back."""

from __future__ import annotations

import json
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from pathlib import Path
from types import FrameType

from rig.artifacts.atomic import write_text
from rig.errors import InstrumentError
from rig.instruments.console_serial import SerialConsole
from rig.instruments.protocols import PowerProtocol
from rig.model import Chunk

#: The run folder's journal: the originals, written before anything is changed.
JOURNAL = "uboot-env.json"
#: What each console session read (the set and the restore), as console.jsonl.
SET_LOG = "uboot-env-set.jsonl"
RESTORE_LOG = "uboot-env-restore.jsonl"
AUTOBOOT = re.compile(rb"Hit any key to stop autoboot: *(-?\d+)")
PROMPT = "=> "
#: Sent to stop autoboot: any key does; Ctrl-C also clears a line typed at the prompt.
KEY = b"\x03"
#: saveenv erases and writes flash: a NOR sector erase alone can take seconds.
SAVEENV_S = 120.0
#: U-Boot's console buffer (CONFIG_SYS_CBSIZE) is 256 bytes on many boards.
MAX_LINE = 250
_VAR = re.compile(r"[A-Za-z0-9_.:/@+-]+")


def _quoted(name: str, value: str) -> str:
    """`setenv NAME 'VALUE'`: hush takes a single-quoted word as it is ($ and ; too)."""
    if not _VAR.fullmatch(name):
        raise InstrumentError(f"U-Boot env: {name!r} is not a variable name setenv can take")
    if "'" in value or any(c in value for c in "\0\r\n"):
        raise InstrumentError(f"U-Boot env: {name}: a value with ' or a line break cannot be typed")
    line = f"setenv {name} '{value}'"
    if len(line) > MAX_LINE:
        raise InstrumentError(f"U-Boot env: {name}: `{line[:40]}...` is over {MAX_LINE} bytes")
    return line


class UbootPrompt:
    """One power cycle into U-Boot's prompt: the console records it to `log`."""

    def __init__(
        self,
        power: PowerProtocol,
        console: SerialConsole,
        log: Path,
        timeout_s: float,
        prompt: str = PROMPT,
    ) -> None:
        self.power, self.console, self.log, self.timeout_s = power, console, log, timeout_s
        self.prompt = prompt.encode()  # CONFIG_SYS_PROMPT, `=> ` unless the board changed it
        self._buf = bytearray()
        self._cond = threading.Condition()

    def _feed(self, chunk: Chunk) -> None:
        with self._cond:
            self._buf += chunk.data
            self._cond.notify_all()

    def _wait(self, test: re.Pattern[bytes] | bytes, start: int, timeout_s: float) -> int:
        """Where `test` ends in what was read from `start` on; -1 at the timeout."""
        end = time.monotonic() + timeout_s
        with self._cond:
            while True:
                data = bytes(self._buf[start:])
                if isinstance(test, bytes):
                    at = data.rfind(test)
                    if at >= 0 and data.endswith(test):
                        return start + at + len(test)
                elif m := test.search(data):
                    return start + m.end()
                left = end - time.monotonic()
                if left <= 0:
                    return -1
                self._cond.wait(left)

    def _tail(self, start: int = 0) -> str:
        text = bytes(self._buf[start:]).decode(errors="replace").strip()
        return text[-300:] or "nothing"

    def enter(self, early_key: bool = False) -> None:
        """Power-cycle and stop autoboot. `early_key` sends the key every 10 ms from
        power-on, for `bootdelay=0`, which checks for a key once (a key already in the
        UART's FIFO stops it); off by default, since a boot ROM or SPL may read it too."""
        self.power.off()
        self.console.start(self.log, self._feed)
        self.power.on()
        if early_key:
            end = time.monotonic() + self.timeout_s
            while self._wait(self.prompt, 0, 0.01) < 0 and time.monotonic() < end:
                self.console.write(KEY)
        elif (at := self._wait(AUTOBOOT, 0, self.timeout_s)) < 0:
            raise InstrumentError(
                f"U-Boot offered no autoboot prompt in {self.timeout_s:g} s (`Hit any key to "
                "stop autoboot`; bootdelay=-2 boots without one, a silent console hides "
                f"it); the console read: {self._tail()}"
            )
        else:
            self.console.write(KEY)
            delay = AUTOBOOT.search(bytes(self._buf[:at]))
            got = self._wait(self.prompt, at, 2.0)
            # Between the count and the prompt only the count's own bytes: anything else
            # is bootcmd's output, stopped by the Ctrl-C (in a `sleep`), not autoboot.
            between = bytes(self._buf[at : max(at, got - len(self.prompt))])
            if got < 0 or between.strip(b"0123456789 \b\r\n"):
                n = delay.group(1).decode() if delay else "?"
                hint = (
                    "bootdelay=0 checks for a key once, before it can be sent after the "
                    "prompt; stop it with early_key, or set bootdelay=1 first"
                    if n == "0"
                    else "the key did not stop it (a keyed autoboot wants its string), or "
                    f"its prompt is not {self.prompt.decode()!r}"
                )
                raise InstrumentError(
                    f"U-Boot did not stop (bootdelay={n}): {hint}; then: {self._tail(at)}"
                )
        if self._wait(self.prompt, 0, 0) < 0:
            raise InstrumentError(f"U-Boot gave no {self.prompt!r} prompt: {self._tail()}")
        self._sync()

    def _sync(self) -> None:
        """Wait for the output of an `echo` typed after every key sent: the keys queued
        before it (each an `<INTERRUPT>` at the prompt) are then all read."""
        with self._cond:
            start = len(self._buf)
        token = f"bootrig-sync-{time.monotonic_ns()}".encode()
        self.console.write(b"echo " + token + b"\n")
        if (
            self._wait(re.compile(rb"\n" + token + rb"\r?\n" + re.escape(self.prompt)), start, 10.0)
            < 0
        ):
            raise InstrumentError(f"U-Boot: the prompt took no command: {self._tail(start)}")

    def run(self, command: str, timeout_s: float = 10.0) -> str:
        """Run one command at the prompt; its output, without the echo and the prompt."""
        with self._cond:
            start = len(self._buf)
        self.console.write(command.encode() + b"\n")
        at = self._wait(self.prompt, start, timeout_s)
        if at < 0:
            raise InstrumentError(f"U-Boot: `{command}` gave no prompt back: {self._tail(start)}")
        out = bytes(self._buf[start : at - len(self.prompt)]).decode(errors="replace")
        lines = out.replace("\r", "").split("\n")
        return "\n".join(lines[1:]).strip()  # the first line is the echo

    def printenv(self, name: str) -> str | None:
        """The variable's value, None if it is not defined."""
        out = self.run(f"printenv {name}")
        if f'"{name}" not defined' in out:
            return None
        if not out.startswith(f"{name}="):
            raise InstrumentError(f"U-Boot: `printenv {name}` gave {out[:200]!r}")
        return out[len(name) + 1 :]

    def apply(self, values: Mapping[str, str | None]) -> None:
        """`setenv` each (None deletes it), then `saveenv`; an error names what failed."""
        for name, value in values.items():
            out = self.run(_quoted(name, value) if value is not None else f"setenv {name}")
            if out:
                raise InstrumentError(f"U-Boot: setenv {name}: {out[:200]}")
            if self.printenv(name) != value:
                raise InstrumentError(f"U-Boot: setenv {name} did not take ({value!r})")
        out = self.run("saveenv", SAVEENV_S)
        if not out.rstrip().endswith("OK"):
            raise InstrumentError(f"U-Boot: saveenv failed: {' / '.join(out.splitlines()[-4:])}")

    def leave(self) -> None:
        self.console.stop()


def _check(values: Mapping[str, str | None]) -> None:
    for name, value in values.items():
        _quoted(name, value or "")


def _delay(values: Mapping[str, object]) -> int | None:
    """The bootdelay `values` set, if they set a number."""
    value = values.get("bootdelay")
    try:
        return int(str(value), 0) if value is not None else None
    except ValueError:
        return None


def _refuse_unstoppable(changes: Mapping[str, str | None]) -> None:
    """bootdelay=-2 (and below) boots without looking for a key: the restore could never
    stop it again."""
    delay = _delay(changes)
    if delay is not None and delay < -1:
        raise InstrumentError(
            f"U-Boot env: bootdelay={changes['bootdelay']} boots without checking for a "
            "key: the original environment could not be restored through the console"
        )


def _restore_early_key(doc: Mapping[str, object]) -> bool:
    """The restore's power cycle meets the changed environment: with bootdelay 0 or -1
    set, only a key sent from power-on stops it (or finds the prompt)."""
    changes = doc.get("changes")
    delay = _delay(changes) if isinstance(changes, Mapping) else None
    return bool(doc.get("early_key")) or (delay is not None and delay <= 0)


def _journal(folder: Path, doc: dict[str, object]) -> None:
    write_text(folder / JOURNAL, json.dumps(doc, indent=2) + "\n")


def restore_journal(
    folder: Path, power: PowerProtocol, console: SerialConsole, timeout_s: float = 30.0
) -> bool:
    """Put back the originals a killed rig journaled in `folder`; False if there was
    nothing to restore (no journal, or restored already)."""
    try:
        doc = json.loads((folder / JOURNAL).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError) as e:
        raise InstrumentError(f"{folder / JOURNAL}: {e}") from None
    if doc.get("state") == "restored":
        return False
    _restore(folder, doc, power, console, timeout_s)
    return True


def _restore(
    folder: Path,
    doc: dict[str, object],
    power: PowerProtocol,
    console: SerialConsole,
    timeout_s: float,
) -> None:
    originals = doc["originals"]
    assert isinstance(originals, dict)
    prompt = UbootPrompt(
        power, console, folder / RESTORE_LOG, timeout_s, str(doc.get("prompt", PROMPT))
    )
    try:
        prompt.enter(_restore_early_key(doc))
        prompt.apply(originals)
    finally:
        prompt.leave()
    _journal(folder, {**doc, "state": "restored"})


class _Interrupted(KeyboardInterrupt):
    """SIGTERM while the environment is changed: unwinds like Ctrl-C, so it is restored."""


@contextmanager
def _signals_raise() -> Iterator[None]:
    def _term(_s: int, _f: FrameType | None) -> None:
        raise _Interrupted

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextmanager
def _signals_held() -> Iterator[list[int]]:
    """The restore runs to its end: a Ctrl-C or SIGTERM meanwhile is noted, not raised."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return
    old = {
        s: signal.signal(s, lambda n, _f: got.append(n)) for s in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield got
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextmanager
def changed_env(
    power: PowerProtocol,
    console: SerialConsole,
    folder: Path,
    changes: Mapping[str, str | None],
    *,
    timeout_s: float = 30.0,
    early_key: bool = False,
    prompt_text: str = PROMPT,
    own_signals: bool = True,
) -> Iterator[dict[str, str | None]]:
    """Inside the block the board's saved environment has `changes` (None: deleted); it
    yields the originals. The board is left on at U-Boot's prompt: each boot the block
    measures is a power cycle of its own (rig.measure.cycle powers off first). After the
    block, and on any error or Ctrl-C/SIGTERM, the originals go back. `own_signals=False`
    leaves Ctrl-C and SIGTERM to the caller's handlers (a stop flag, as `rig try` has; the
    block then ends soon after one), except during the restore, after which a signal held
    there is handed to them."""
    _check(changes)
    _refuse_unstoppable(changes)
    folder.mkdir(parents=True, exist_ok=True)
    doc: dict[str, object] = {
        "changes": dict(changes),
        "early_key": early_key,
        "prompt": prompt_text,
    }
    prompt = UbootPrompt(power, console, folder / SET_LOG, timeout_s, prompt_text)
    changing = False
    try:
        with _signals_raise() if own_signals else nullcontext():
            prompt.enter(early_key)
            originals = {name: prompt.printenv(name) for name in changes}
            _check(originals)  # what cannot be typed back is refused before any change
            doc["originals"] = originals
            _journal(folder, {**doc, "state": "changing"})
            changing = True
            prompt.apply(changes)
            prompt.leave()
            _journal(folder, {**doc, "state": "changed"})
            yield dict(originals)
    finally:
        pending = sys.exc_info()[1]  # what ends the block, said beside a failed restore
        prompt.leave()
        if changing:
            with _signals_held() as held:
                try:
                    _restore(folder, doc, power, console, timeout_s)
                except InstrumentError as e:
                    what = (
                        "Ctrl-C or SIGTERM" if isinstance(pending, KeyboardInterrupt) else pending
                    )
                    after = f" (after: {what})" if pending else ""
                    raise InstrumentError(
                        f"restoring the environment: {e}{after}; the originals stay in "
                        f"{folder / JOURNAL} (restore_journal)"
                    ) from e
            if not own_signals:
                for signum in held:  # to the caller's handlers, now restored
                    signal.raise_signal(signum)
            elif held and pending is None:  # a signal held during the restore stops now
                raise KeyboardInterrupt
