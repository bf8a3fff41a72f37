"""The budget planner's process: a death is a clear one-line error, and the next call starts afresh."""

import os

import pytest

from app.planner_process import in_planner, stop_planner
from core.common.errors import InputError


def _die() -> None:
    os._exit(3)  # as if the planner were killed (out of memory, a user's kill)


def test_a_dead_planner_is_a_clear_error_and_the_next_call_starts_a_new_one():
    try:
        first = in_planner(os.getpid)
        assert first != os.getpid()  # it runs in its own process
        with pytest.raises(InputError, match="planner process ended unexpectedly"):
            in_planner(_die)
        second = in_planner(os.getpid)
        assert second not in (first, os.getpid())
    finally:
        stop_planner()

