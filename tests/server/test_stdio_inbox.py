"""The stdio inbox's offer: a line that arrives while the reader waits is offered as it is read, in order."""

from __future__ import annotations

import asyncio

import pytest

from server.stdio.line_check import Line
from server.stdio.pipes import Inbox

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(10)]


class Taker:
    """Takes the lines it is told to take, and keeps every line it was offered."""

    def __init__(self, *taken: bytes) -> None:
        self.taken = set(taken)
        self.offered: list[Line] = []

    def __call__(self, line: Line) -> bool:
        self.offered.append(line)
        return line in self.taken


async def _waiting(inbox: Inbox, offer: Taker) -> asyncio.Task[Line | None]:
    reader = asyncio.get_running_loop().create_task(inbox.next_line(offer))
    await asyncio.sleep(0)  # the reader is waiting now
    return reader


async def test_lines_taken_as_they_arrive_are_not_returned_and_the_first_left_is() -> None:
    inbox = Inbox(1024)
    offer = Taker(b"a", b"b")
    reader = await _waiting(inbox, offer)
    inbox.data_received(b"a\nb\n")
    await asyncio.sleep(0)
    assert not reader.done() and offer.offered == [b"a", b"b"]  # both taken: the reader waits on
    inbox.data_received(b"c\nd\n")
    assert await reader == b"c"
    assert offer.offered == [b"a", b"b", b"c"]  # once one is queued, the next is queued behind it, not offered
    assert await inbox.next_line(offer) == b"d"


async def test_no_line_is_offered_while_nobody_waits() -> None:
    inbox = Inbox(1024)
    offer = Taker(b"a")
    inbox.data_received(b"a\n")
    assert await inbox.next_line(offer) == b"a" and offer.offered == []


async def test_a_reader_without_an_offer_gets_every_line() -> None:
    inbox = Inbox(1024)
    reader = asyncio.get_running_loop().create_task(inbox.next_line())
    await asyncio.sleep(0)
    inbox.data_received(b"a\n")
    assert await reader == b"a"


async def test_end_of_input_ends_a_wait_whose_lines_were_all_taken() -> None:
    inbox = Inbox(1024)
    reader = await _waiting(inbox, Taker(b"a"))
    inbox.data_received(b"a\n")
    inbox.eof_received()
    assert await reader is None
