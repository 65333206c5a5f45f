"""A connection URL's secrets are hidden where they stand as credentials, and nowhere else
(sqlmetrics/engines/credentials.py; the real server's messages: tests/engines/
test_shared_connections.py)."""

from __future__ import annotations

import pytest

from sqlmetrics.engines.credentials import scrub, shown, url_secrets

sqlalchemy = pytest.importorskip("sqlalchemy")  # the sqlalchemy extra

URL = sqlalchemy.make_url(
    "postgresql+psycopg://reco:reco@db:5432/reco?password=reco&sslmode=require&api_token=p%40ss"
)


def test_the_urls_password_and_secret_query_values_are_its_secrets() -> None:
    assert url_secrets(URL) == ("reco", "reco", "p@ss")
    assert shown(URL) == (
        "postgresql+psycopg://reco:***@db:5432/reco?password=***&sslmode=require&api_token=***"
    )


@pytest.mark.parametrize(
    ("message", "scrubbed"),
    [
        # the word elsewhere: a user, a table, a database, "recommendations"
        (
            'relation "reco_recs" does not exist for user "reco" in recommendations',
            'relation "reco_recs" does not exist for user "reco" in recommendations',
        ),
        ("postgresql://reco:reco@db/reco failed", "postgresql://reco:***@db/reco failed"),
        ("host=db password=reco user=reco", "host=db password=*** user=reco"),
        ("host=db password='reco' user=reco", "host=db password='***' user=reco"),
        ("{'password': 'reco', 'user': 'reco'}", "{'password': '***', 'user': 'reco'}"),
        ("/db?password=reco&user=reco", "/db?password=***&user=reco"),
        ("UID=reco;PWD=reco;", "UID=reco;PWD=***;"),
        ("api_token=p%40ss at the end", "api_token=*** at the end"),
        ("postgresql://reco:p%40ss@db", "postgresql://reco:***@db"),
    ],
)
def test_a_secret_is_hidden_where_it_stands_as_a_credential(message: str, scrubbed: str) -> None:
    assert scrub(message, url_secrets(URL)) == scrubbed
