"""A connection URL's secrets, kept out of every message.

A URL carries secrets in two places: its password (``user:secret@host``) and its query string
(``?password=secret``, ``?token=...``). ``shown`` writes the URL with both hidden; ``scrub``
hides them in a driver's message where they stand as credentials (after ``user:`` before an
``@``, or as the value of a password-like key), and leaves every other occurrence of the word
alone: with user ``reco`` and password ``reco``, ``relation "reco_recs"`` stays as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus, urlencode

HIDDEN = "***"

# Query keys whose values are secrets: password, passwd, pwd, secret, token, api_key,
# private_key_passphrase, credentials...
_SECRET_KEY = re.compile(r"pass|pwd|secret|token|credential|key", re.IGNORECASE)
# What may precede a secret in a message: ``user:`` in a URL (the secret then ends at ``@``), or
# a password-like key and ``=`` or ``:``, quoted or not (a DSN, a query string, a dict).
_KEYS = r"[\w.-]*(?:pass|pwd|secret|token|credential|key)[\w.-]*"


def is_secret_key(name: str) -> bool:
    return _SECRET_KEY.search(name) is not None


def url_secrets(url: Any) -> tuple[str, ...]:
    """The secrets of a SQLAlchemy URL: its password and its password-like query values."""
    found = [url.password] if isinstance(url.password, str) and url.password else []
    for key, value in url.query.items():
        if is_secret_key(key):
            found += [value] if isinstance(value, str) else list(value)
    return tuple(secret for secret in found if secret)


def shown(url: Any) -> str:
    """A SQLAlchemy URL as a message shows it: its password and password-like query values
    as ***."""
    base = url.set(query={}).render_as_string(hide_password=True)
    pairs = [
        (key, HIDDEN if is_secret_key(key) else value)
        for key, values in url.query.items()
        for value in ([values] if isinstance(values, str) else values)
    ]
    return f"{base}?{urlencode(pairs, safe='*')}" if pairs else base


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each secret hidden where it stands as a credential, in its own spelling
    and as a URL spells it."""
    for secret in secrets:
        for spelling in dict.fromkeys((secret, quote(secret, safe=""), quote_plus(secret))):
            for pattern in _credentials(spelling):
                text = pattern.sub(rf"\g<before>{HIDDEN}", text)
    return text


def _credentials(secret: str) -> tuple[re.Pattern[str], ...]:
    """Where ``secret`` stands as a credential: after ``user:`` before ``@``, or as the value
    of a password-like key (up to a quote, a separator, a space or the end)."""
    value = re.escape(secret)
    in_url = rf"(?P<before>:){value}(?=@)"
    after_key = rf"(?P<before>\b{_KEYS}['\"]?\s*[=:]\s*['\"]?){value}(?=['\"&;,)}}\s]|$)"
    return re.compile(in_url), re.compile(after_key, re.IGNORECASE)
