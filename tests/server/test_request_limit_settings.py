"""Which per-user bounds a server gets by default: on where users share it (HTTP with sign-in), off where it serves
the one user who started it, and always what the operator set."""

from __future__ import annotations

import pytest

from server.settings import Settings
from tests.support import SECRET
from toolsets.admission.limits import Limits

pytestmark = pytest.mark.timeout(30)


def test_shared_servers_are_bounded_by_default_and_single_user_ones_are_not() -> None:
    assert Settings(transport="http", jwt_secret=SECRET).request_limits == Limits(per_minute=600, concurrent=16)
    assert Settings(transport="stdio").request_limits == Limits()
    assert Settings(transport="http").request_limits == Limits()  # loopback, every caller is --user


def test_what_the_operator_sets_wins_and_zero_turns_it_off() -> None:
    chosen = Settings(transport="http", jwt_secret=SECRET, calls_per_minute=0, max_concurrent_calls=3)
    assert chosen.request_limits == Limits(per_minute=0, concurrent=3)
    assert Settings(transport="stdio", calls_per_minute=30).request_limits == Limits(per_minute=30)
    with pytest.raises(ValueError):
        Settings(calls_per_minute=-1)
