"""Composing runs with the cyclic collector paused (sqlmetrics/gc_paused.py) and leaves it as
it found it: on, off, or after an error."""

from __future__ import annotations

import gc

import pytest

import sqlmetrics
from sqlmetrics.gc_paused import gc_paused


def test_the_collector_is_paused_during_the_call_and_restored_after() -> None:
    seen: list[bool] = []

    @gc_paused
    def inner() -> None:
        seen.append(gc.isenabled())

    @gc_paused
    def outer() -> None:
        inner()
        seen.append(gc.isenabled())

    assert gc.isenabled()
    outer()
    assert seen == [False, False]  # the inner call does not turn it back on
    assert gc.isenabled()


def test_an_error_restores_the_collector_and_a_paused_one_stays_paused() -> None:
    @gc_paused
    def failing() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError):
        failing()
    assert gc.isenabled()
    gc.disable()
    try:
        sqlmetrics.to_sql(["ndcg@10"], dialect="postgres")
        assert not gc.isenabled()  # the caller's choice is kept
    finally:
        gc.enable()
    sqlmetrics.to_sql(["map@10"], dialect="snowflake")
    assert gc.isenabled()
