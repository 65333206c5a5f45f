"""One rule for a connection the caller shares (between threads, or with their own work): a
call has it to itself, and its timeout cancels its own statement only.

- ``exclusive``: the calls of sqlmetrics on one connection take turns, each from its first
  statement to its last. A DuckDB or DB-API connection runs one statement at a time, and a
  call's statements belong together (a setting read and restored, inputs registered, the
  probes and the query); interleaved, one thread got another's numbers or its error.
- ``Watchdog``: a timeout cancels the connection's statement only while it is this call's
  (never after it ended, when the connection may run someone else's), and never a savepoint's
  own statements, which keep the caller's transaction whole.
- ``checked_timeout``: a timeout is a finite number of seconds above 0.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import threading
from collections.abc import Callable, Iterator

from sqlmetrics.errors import SqlmetricsError


class _Turns:
    """A reentrant lock per connection object, kept while a call holds or awaits it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[int, tuple[threading.RLock, int]] = {}

    @contextlib.contextmanager
    def exclusive(self, connection: object) -> Iterator[None]:
        key = id(connection)  # the object is alive while a call uses it: the id is its own
        with self._lock:
            lock, users = self._held.get(key, (threading.RLock(), 0))
            self._held[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._lock:
                lock, users = self._held[key]
                if users == 1:
                    del self._held[key]
                else:
                    self._held[key] = (lock, users - 1)


_turns = _Turns()


def exclusive(connection: object) -> contextlib.AbstractContextManager[None]:
    """The caller's ``connection`` to this call alone while inside: another call on it, from
    another thread, waits (a call may nest another on its own thread)."""
    return _turns.exclusive(connection)


def checked_timeout(timeout: object) -> float | None:
    """``timeout`` as seconds: None, or a finite number above 0 (not a bool, nor text)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise SqlmetricsError(
            f"timeout must be a number of seconds (or None for no limit), not {timeout!r}"
        )
    seconds = float(timeout)
    if not (math.isfinite(seconds) and 0 < seconds <= threading.TIMEOUT_MAX):
        raise SqlmetricsError(
            f"timeout must be a number of seconds above 0 and at most "
            f"{threading.TIMEOUT_MAX:.0f} (or None for no limit), not {timeout!r}"
        )
    return seconds


class Watchdog:
    """Cancels a call's running statement once ``timeout`` seconds have passed since it began
    watching: through ``cancel``, from a timer thread, and only while armed."""

    def __init__(self, timeout: float | None, cancel: Callable[[], None]) -> None:
        self.timeout = timeout
        self.cancel = cancel
        self.expired = False
        self._lock = threading.Lock()
        self._armed = False

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Armed while inside; on leaving, a cancel under way has ended and none follows."""
        if self.timeout is None:
            yield
            return
        self.expired = False
        with self._lock:
            self._armed = True
        timer = threading.Timer(self.timeout, self._expire)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            with self._lock:
                self._armed = False
            timer.cancel()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Statements the timeout must not cancel (a savepoint's own): the timer waits until
        they are done; what expired meanwhile shows in ``expired``."""
        with self._lock:
            armed, self._armed = self._armed, False
        try:
            yield
        finally:
            with self._lock:
                self._armed = armed

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            if self._armed:
                self.cancel()
