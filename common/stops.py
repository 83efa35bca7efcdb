"""Stopping a long command: the first SIGTERM or Ctrl-C asks it to finish cleanly, the second ends it now.

Every long command (`train`, `exploit`, `fight`, `bc`, `serve`) follows one rule, so a user learns it once:

* **First signal** (SIGTERM, SIGINT): `StopRequest.requested` turns true and `StopRequest.event` is set. The
  command finishes what it is doing at its next safe point (an iteration, a fight, a start-up step), keeps
  what it has (a checkpoint, a report) and exits 0.
* **Second signal**: `HardStop` is raised in the main thread, wherever it is (a final evaluation of 600
  fights, a `ray.get`). It is a `KeyboardInterrupt`, so ``except Exception`` blocks do not swallow it; the
  command writes what it has measured, says what it has not, and exits 130 (`HARD_STOP_EXIT`). A watchdog
  thread ends the process with 130 after `HARD_STOP_GRACE_S` if it is still alive then (a signal handler only
  runs between Python bytecodes, so a long call into C would otherwise delay the stop): the user's second
  Ctrl-C is obeyed within seconds, always.

`exit_quietly_on_signals` covers the moments before a command has installed its own `StopRequest` (the
interpreter importing the CLI, parsing options): a signal there exits 0 at once instead of dying by the
signal (status -15) or printing a traceback of the import it interrupted.

Standard library only (the bottom layer): `serving/` and `osrs_rllib/` both use it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

logger = logging.getLogger(__name__)

HARD_STOP_EXIT = 130
"""Exit status of a command ended by a second signal (the shell's convention for Ctrl-C: 128 + SIGINT)."""
HARD_STOP_GRACE_S = 3.0
"""After a second signal, the longest the process may take to write what it has before it is ended with
`HARD_STOP_EXIT` (the promise to the user is 5 s)."""
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class HardStop(KeyboardInterrupt):
    """A second stop signal: end now, keeping what is measured and saying what is not.

    A `KeyboardInterrupt` so that code which already treats Ctrl-C as "end now" (a ``finally`` that writes
    a report, an ``except KeyboardInterrupt`` that returns 130) does the same for a second SIGTERM."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by a second {signal.Signals(signum).name}")
        self.signum = signum


class StopRequest:
    """SIGTERM/SIGINT handling of a long command (see the module docstring).

    Args:
        on_first: Called (in the main thread, from the handler) with the signal's number on the first
            signal, e.g. to log "stop requested: finishing this iteration". Keep it short.
        before_exit: Called by the watchdog just before it ends a process that did not exit within
            `grace_s` of a second signal: a last chance to write "not measured" somewhere. It runs in another
            thread while the main thread may hold locks: write a small file, nothing more.
        grace_s: See `HARD_STOP_GRACE_S`.
    """

    def __init__(self, on_first: Callable[[int], None] | None = None,
                 before_exit: Callable[[], None] | None = None, grace_s: float = HARD_STOP_GRACE_S) -> None:
        self.on_first = on_first
        self.before_exit = before_exit
        self.grace_s = grace_s
        self.event = threading.Event()
        self.signum: int | None = None
        """The first signal received (None: none yet)."""
        self.hard = False
        """A second signal arrived."""
        self._previous: dict[int, Any] = {}
        self._watchdog: threading.Thread | None = None

    @property
    def requested(self) -> bool:
        """A stop was asked for (first signal or later)."""
        return self.event.is_set()

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name if self.signum else "a stop request"

    def request(self) -> None:
        """Ask for a stop without a signal (``osrs-rllib stop`` through a file, a test)."""
        self.event.set()

    def install(self) -> StopRequest:
        """Install the handlers (main thread only; elsewhere this does nothing). Idempotent: call it again after
        anything that replaces them (`ray.init` installs its own SIGTERM handler). `uninstall` restores what
        was there before the first call."""
        if threading.current_thread() is not threading.main_thread():
            return self
        for sig in STOP_SIGNALS:
            previous = signal.signal(sig, self._handle)
            self._previous.setdefault(sig, previous)
        return self

    def uninstall(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig, handler in self._previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        self._previous.clear()

    @contextlib.contextmanager
    def shielded(self, raise_after: bool = True) -> Iterator[None]:
        """While the block runs (writing a result, a few hundred milliseconds), signals are recorded but raise
        nothing, so that a second Ctrl-C cannot leave a half-done write; a hard stop that arrived meanwhile is
        raised when the block ends (with `raise_after`; else the caller, about to return, reads `hard`). The
        watchdog still runs."""
        self._shield = True
        try:
            yield
        finally:
            self._shield = False
        if self._hard_pending:
            self._hard_pending = False
            if raise_after:
                raise HardStop(self.signum or signal.SIGINT)

    _shield = False
    _hard_pending = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.event.is_set() and self._shield:
            if not self.hard:
                self.hard = True
                self._start_watchdog()
            self._hard_pending = True
            return
        if not self.event.is_set():
            self.signum = signum
            self.event.set()
            if self.on_first is not None:
                self.on_first(signum)
            return
        if not self.hard:
            self.hard = True
            self._start_watchdog()
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(f"{signal.Signals(signum).name} again: ending now, keeping what is measured\n")
                sys.stderr.flush()
        raise HardStop(signum)

    def _start_watchdog(self) -> None:
        def end_if_still_alive() -> None:
            if self._exit_event.wait(self.grace_s):
                return
            if self.before_exit is not None:
                try:
                    self.before_exit()
                except Exception:  # the process is ending either way
                    logger.exception("writing what was measured before a forced exit failed")
            sys.stderr.write(f"stopped: still running {self.grace_s:g} s after a second stop signal; exiting now\n")
            sys.stderr.flush()
            os._exit(HARD_STOP_EXIT)

        self._exit_event = threading.Event()
        self._watchdog = threading.Thread(target=end_if_still_alive, name="hard-stop-watchdog", daemon=True)
        self._watchdog.start()

    def disarm(self) -> None:
        """The process is about to exit on its own after a second signal: the watchdog has nothing to do."""
        if self._watchdog is not None:
            self._exit_event.set()


class StartAborted(BaseException):
    """A stop signal arrived during a start-up step that `abort_on_signal` guards: the step is abandoned.

    A BaseException, as KeyboardInterrupt is, so that the ``except Exception`` blocks of the library being
    started (Ray's) let it through to the command, which then ends what the step had started."""


_deferring: list[str] = []
"""Set while `aborts_deferred` runs: the signal is recorded in it instead of raising."""


@contextlib.contextmanager
def aborts_deferred() -> Iterator[None]:
    """Inside an `abort_on_signal` block: a stop signal raises `StartAborted` only when this block ends. For a
    call that must not be interrupted halfway (a library's C++ initialisation, which crashes the process at exit
    when an exception unwinds through it)."""
    _deferring.append("")
    try:
        yield
    finally:
        what = _deferring.pop()
    if what:
        raise StartAborted(what)


@contextlib.contextmanager
def abort_on_signal(what: str) -> Iterator[None]:
    """While the block runs, a stop signal first reaches the handler installed before (the command's
    `StopRequest`, which records it, or raises `HardStop` on a second one) and then abandons the block with
    `StartAborted`: a start-up step of many seconds (Ray starting, Serve deploying) is not waited out when
    the user has asked to stop. Main thread only; elsewhere the block runs unguarded."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    aborted: list[str] = []

    def abort(signum: int, frame: FrameType | None) -> None:
        handler = previous.get(signum)
        if callable(handler):
            handler(signum, frame)
        reason = f"{signal.Signals(signum).name} while {what}"
        if _deferring:
            _deferring[-1] = _deferring[-1] or reason
            return
        aborted.append(reason)
        raise StartAborted(reason)

    for sig in STOP_SIGNALS:
        signal.signal(sig, abort)
    try:
        yield
    except StartAborted:
        raise
    except Exception as exc:
        if aborted:
            # Raised where Python wraps what it catches (a class's ``__set_name__`` during an import gives a
            # RuntimeError): the stop is still why the block ended.
            raise StartAborted(aborted[0]) from exc
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


_quiet: dict[int, Any] = {}


def exit_quietly_on_signals() -> None:
    """Until a command installs its own handling, SIGTERM and SIGINT exit 0 at once (130 for Ctrl-C pressed
    twice is not needed here: nothing has started that could be kept). Main thread only; idempotent."""
    if threading.current_thread() is not threading.main_thread():
        return

    def leave(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)

    for sig in STOP_SIGNALS:
        previous = signal.signal(sig, leave)
        _quiet.setdefault(sig, previous)
