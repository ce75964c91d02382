"""The terminal driver, made to survive the terminal going away (a closed window, SIGHUP, EIO).

Textual's Linux driver writes through a thread that dies on the first failed write (EIO once the
terminal is gone); the app then blocks for good on the full queue of writes, ignoring SIGTERM,
while its input thread spins on a descriptor that only says EOF. Here a failed write, a failed
read or SIGHUP marks the terminal lost: nothing is written any more, the input thread stops, and
the app is told (it disposes every run and exits).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable
from typing import IO, Any

from textual.drivers.linux_driver import LinuxDriver

from acp_tui import compat
from acp_tui.ui import typed_ahead


class _TerminalFile:
    """The driver's output file: a write that fails means the terminal is gone, never an error."""

    def __init__(self, file: IO[str], lost: Callable[[], None]) -> None:
        self._file = file
        self._lost = lost
        self.gone = False

    def write(self, text: str) -> int:
        if self.gone:
            return 0
        try:
            return self._file.write(text)
        except (OSError, ValueError):
            self._lost()
            return 0

    def flush(self) -> None:
        if self.gone:
            return
        try:
            self._file.flush()
        except (OSError, ValueError):
            self._lost()

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return not self.gone and self._file.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class SupervisorDriver(LinuxDriver):
    """Linux driver whose loss of the terminal ends the app instead of hanging it."""

    on_terminal_lost: Callable[[], None] | None = None  # called in the app's loop, once

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._app_loop = asyncio.get_running_loop()
        self._terminal = _TerminalFile(compat.driver_output(self), self.terminal_lost)
        compat.set_driver_output(self, self._terminal)
        self._lost_once = threading.Lock()

    def terminal_lost(self) -> None:
        """From any thread: stop writing and reading, and tell the app (once)."""
        if not self._lost_once.acquire(blocking=False):
            return
        self._terminal.gone = True
        self.exit_event.set()  # the input thread stops within its 0.1 s select
        compat.drop_queued_writes(self)  # so that no write waits for room in the queue
        loop, callback = self._app_loop, self.on_terminal_lost
        if callback is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(callback)

    def write(self, data: str) -> None:
        if not self._terminal.gone:
            super().write(data)

    def flush(self) -> None:
        if not self._terminal.gone:
            super().flush()

    def start_application_mode(self) -> None:
        super().start_application_mode()  # type: ignore[no-untyped-call]  # Textual's is unannotated
        # `acp-tui` took the terminal before us (`typed_ahead`): its mode before that is the one to
        # give back, not ours.
        self.attrs_before = typed_ahead.saved_mode() or self.attrs_before

    def run_input_thread(self) -> None:
        typed = typed_ahead.typed()  # before we read: first
        for event in compat.parse_terminal_input(typed) if typed else ():
            self.process_message(event)
        try:
            super().run_input_thread()
        except OSError:  # EIO: the terminal is gone
            self.terminal_lost()

    def disable_input(self) -> None:
        if self._terminal.gone:
            return  # the input thread was stopped; no terminal to restore
        super().disable_input()

    def stop_application_mode(self) -> None:
        if self._terminal.gone:
            return
        super().stop_application_mode()


def detach_from_terminal() -> None:
    """Point stdin, stdout and stderr at /dev/null: a late print at exit must not fail on EIO."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
    except OSError:
        pass
