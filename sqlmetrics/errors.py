"""The one exception users see: a message that says what is wrong and what to do."""

from __future__ import annotations


class SqlmetricsError(ValueError):
    """Bad input or arguments. The CLI prints its message as one line, without a traceback."""
