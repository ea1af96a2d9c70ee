"""RetryTransport: what is resent, how often, and how long it waits (sleeps recorded, never slept)."""

from __future__ import annotations

import datetime as dt
import email.utils
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from toolsets.infra.upstream.retry import RetryTransport, retrying_client
from toolsets.infra.upstream.retry_policy import ATTEMPTS, RETRY_SAFE, RetryPolicy, retry_after_seconds

URL = "https://api.example.test/v1/things"
Answer = Callable[[httpx.Request], httpx.Response]


class Upstream:
    """A fake API answering from a script, one entry per request (the last one repeats)."""

    def __init__(self, *script: int | Answer | Exception) -> None:
        self.script = list(script)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.script[min(len(self.requests), len(self.script)) - 1]
        if isinstance(step, Exception):
            raise step
        if isinstance(step, int):
            return httpx.Response(step, json={"error": {"code": step}} if step >= 400 else {"ok": True})
        return step(request)


class Waits:
    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


async def send(
    upstream: Upstream,
    method: str = "GET",
    *,
    policy: RetryPolicy | None = None,
    waits: Waits | None = None,
    **kwargs: Any,
) -> httpx.Response:
    async with retrying_client(
        httpx.MockTransport(upstream), policy or RetryPolicy(), sleep=waits or Waits(), timeout=5.0
    ) as client:
        return await client.request(method, URL, **kwargs)


@pytest.mark.anyio
async def test_a_transient_answer_is_resent_with_growing_backoff() -> None:
    upstream, waits = Upstream(503, 502, 200), Waits()
    response = await send(upstream, policy=RetryPolicy(attempts=3, base_delay=0.5), waits=waits)
    assert response.status_code == 200 and response.json() == {"ok": True}
    assert len(upstream.requests) == 3 and response.extensions[ATTEMPTS] == 3
    assert waits.seconds == [0.5, 1.0]


@pytest.mark.anyio
async def test_sends_are_bounded_and_the_last_answer_is_returned() -> None:
    upstream, waits = Upstream(503), Waits()
    response = await send(upstream, policy=RetryPolicy(attempts=4, base_delay=1.0, max_delay=3.0), waits=waits)
    assert response.status_code == 503 and len(upstream.requests) == 4
    assert response.extensions[ATTEMPTS] == 4
    assert waits.seconds == [1.0, 2.0, 3.0]  # doubling, capped at max_delay


@pytest.mark.anyio
@pytest.mark.parametrize("status", [400, 401, 403, 404, 422, 501])
async def test_answers_that_will_not_change_are_not_resent(status: int) -> None:
    upstream = Upstream(status, 200)
    response = await send(upstream)
    assert response.status_code == status and len(upstream.requests) == 1


@pytest.mark.anyio
async def test_a_policy_chooses_which_statuses_are_resent() -> None:
    upstream = Upstream(429, 200)
    response = await send(upstream, policy=RetryPolicy(statuses=frozenset({500, 502, 503, 504})))
    assert response.status_code == 429 and len(upstream.requests) == 1


@pytest.mark.anyio
async def test_a_post_is_resent_only_when_marked_as_a_read() -> None:
    plain = Upstream(503, 200)
    assert (await send(plain, "POST", json={"q": "x"})).status_code == 503
    assert len(plain.requests) == 1  # it may have changed something upstream

    read = Upstream(503, 200)
    response = await send(read, "POST", json={"q": "x"}, extensions={RETRY_SAFE: True})
    assert response.status_code == 200 and len(read.requests) == 2
    assert read.requests[1].content == read.requests[0].content == b'{"q":"x"}'  # the body is sent again


@pytest.mark.anyio
async def test_an_idempotent_method_can_be_marked_as_not_resendable() -> None:
    upstream = Upstream(503, 200)
    response = await send(upstream, "DELETE", extensions={RETRY_SAFE: False})
    assert response.status_code == 503 and len(upstream.requests) == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("header", "waited"),
    [("2", 2.0), ("0", 0.0), ("-5", 0.0)],
)
async def test_retry_after_in_seconds_is_waited(header: str, waited: float) -> None:
    waits = Waits()
    upstream = Upstream(lambda request: httpx.Response(429, headers={"Retry-After": header}), 200)
    response = await send(upstream, waits=waits)
    assert response.status_code == 200 and waits.seconds == [waited]


@pytest.mark.anyio
async def test_retry_after_longer_than_the_cap_goes_back_to_the_caller_at_once() -> None:
    waits = Waits()
    upstream = Upstream(lambda request: httpx.Response(429, headers={"Retry-After": "120"}), 200)
    response = await send(upstream, policy=RetryPolicy(max_retry_after=30.0), waits=waits)
    assert response.status_code == 429 and len(upstream.requests) == 1 and waits.seconds == []


@pytest.mark.anyio
async def test_an_unreadable_retry_after_falls_back_to_the_backoff() -> None:
    waits = Waits()
    upstream = Upstream(lambda request: httpx.Response(503, headers={"Retry-After": "soon"}), 200)
    await send(upstream, policy=RetryPolicy(base_delay=0.25), waits=waits)
    assert waits.seconds == [0.25]


def test_retry_after_as_an_http_date() -> None:
    later = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=90)
    seconds = retry_after_seconds(email.utils.format_datetime(later, usegmt=True))
    assert seconds is not None and 85 <= seconds <= 90
    past = email.utils.format_datetime(dt.datetime(2001, 1, 1, tzinfo=dt.UTC), usegmt=True)
    assert retry_after_seconds(past) == 0.0
    assert retry_after_seconds(None) is None and retry_after_seconds("nan") is None


@pytest.mark.anyio
async def test_a_timeout_is_resent_for_a_read_then_raised() -> None:
    upstream, waits = Upstream(httpx.ReadTimeout("slow")), Waits()
    with pytest.raises(httpx.ReadTimeout):
        await send(upstream, policy=RetryPolicy(attempts=3, base_delay=0.1), waits=waits)
    assert len(upstream.requests) == 3 and waits.seconds == [0.1, 0.2]


@pytest.mark.anyio
async def test_a_timeout_of_a_write_is_not_resent() -> None:
    upstream = Upstream(httpx.ReadTimeout("slow"), 200)
    with pytest.raises(httpx.ReadTimeout):
        await send(upstream, "POST", json={"content": "x"})
    assert len(upstream.requests) == 1  # the write may have landed


@pytest.mark.anyio
async def test_a_connection_that_never_opened_is_resent_whatever_the_method() -> None:
    upstream = Upstream(httpx.ConnectError("refused"), 200)
    response = await send(upstream, "POST", json={"content": "x"})
    assert response.status_code == 200 and len(upstream.requests) == 2


@pytest.mark.anyio
async def test_errors_that_are_not_transient_are_raised_at_once() -> None:
    upstream = Upstream(httpx.UnsupportedProtocol("ftp"), 200)
    with pytest.raises(httpx.UnsupportedProtocol):
        await send(upstream)
    assert len(upstream.requests) == 1


@pytest.mark.anyio
async def test_a_streamed_body_is_never_sent_twice() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b"chunk"

    upstream = Upstream(503, 200)
    response = await send(upstream, "PUT", content=body())
    assert response.status_code == 503 and len(upstream.requests) == 1


@pytest.mark.anyio
async def test_closing_the_client_closes_the_wrapped_transport() -> None:
    closed: list[bool] = []

    class Inner(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            return httpx.Response(200)

        async def aclose(self) -> None:
            closed.append(True)

    async with httpx.AsyncClient(transport=RetryTransport(Inner())) as client:
        assert (await client.get(URL)).status_code == 200
    assert closed == [True]
