"""Names with honorifics and titles ("Korean at every edge"): `민지님`, `민지 씨`, `김민지 님` and `준호 팀장님` find
김민지 and 박준호 in `search_users` and name them as a `send_message_to_user` recipient, as `민지` and `준호` do;
a real name that ends like an honorific (`김지양`) is never cut into a shorter one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.support import server_for, services_for
from toolsets.infra.store.users import UserRecord
from toolsets.infra.text.names import names_person, without_honorifics
from toolsets.services import Services

pytestmark = pytest.mark.timeout(60)

PEOPLE = [
    UserRecord(id="minji", username="mj", display_name="김민지"),
    UserRecord(id="junho", username="jh", display_name="박준호"),
    UserRecord(id="jiyang", username="jy", display_name="김지양"),
    UserRecord(id="jiho", username="jiho.k", display_name="김지호"),
    UserRecord(id="me", username="me", display_name="Alex"),
]
HONORIFIC_QUERIES = {
    "민지님": "minji",
    "민지 씨": "minji",
    "김민지 님": "minji",
    "민지님한테": "minji",
    "민지 씨에게": "minji",
    "김민지님께": "minji",
    "민지 선배님": "minji",
    "준호 팀장님": "junho",
    "준호팀장님": "junho",
    "박준호 과장님께서": "junho",
    "준호 팀장": "junho",
    "Minji님": "minji",
}


async def directory(tmp_path: Path) -> Services:
    services = services_for(tmp_path / "people")
    await services.users.import_users(PEOPLE)
    return services


async def searched(client: Client, query: str) -> list[str]:
    result = await client.call_tool("search_users", {"query": query})
    assert not result.is_error and result.structured_content is not None, result
    return [user["id"] for user in result.structured_content["users"]]


@pytest.mark.parametrize(
    ("query", "forms"),
    [
        ("민지님", ("민지",)),
        ("민지 씨", ("민지",)),
        ("김민지 님", ("김민지",)),
        ("준호 팀장님", ("준호 팀장", "준호")),
        ("민지님한테", ("민지",)),
        ("Mr. Park", ("park",)),
        ("민지", ()),  # nothing to strip
        ("민지한테", ()),  # a particle alone: the analyzer already drops it
        ("지양", ()),  # `지` would be too short to name anyone
        ("팀장님", ("팀장",)),
    ],
)
def test_the_forms_of_a_name_without_its_honorifics(query: str, forms: tuple[str, ...]) -> None:
    assert without_honorifics(query) == forms


def test_a_stripped_name_names_a_person_only_as_a_whole() -> None:
    assert names_person("민지", "mj", "김민지") and names_person("김민지", None, "김민지")
    assert names_person("minji", None, "김민지") and names_person("준호", None, "박준호")
    assert not names_person("김지", None, "김지호")  # `김지양` less its `양` is not part of 김지호
    assert not names_person("민", None, "김민지")


def test_stripping_stays_linear_on_long_hostile_text() -> None:
    import time

    started = time.perf_counter()
    for text in ("님" * 200, "팀장님 " * 40, "씨한테" * 66, "a " * 100):
        without_honorifics(text)
    assert time.perf_counter() - started < 1.0


@pytest.mark.anyio
@pytest.mark.usefixtures("store_backend")
@pytest.mark.parametrize(("query", "wanted"), list(HONORIFIC_QUERIES.items()))
async def test_search_users_ignores_honorifics_and_titles(tmp_path: Path, query: str, wanted: str) -> None:
    async with Client(server_for(services=await directory(tmp_path), user="me")) as client:
        assert await searched(client, query) == [wanted]


@pytest.mark.anyio
@pytest.mark.usefixtures("store_backend")
async def test_a_name_that_ends_like_an_honorific_is_never_cut_short(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(services=services, user="me")) as client:
        assert await searched(client, "김지양") == ["jiyang"]
        assert await searched(client, "지양") == ["jiyang"]
        assert await searched(client, "지양님") == ["jiyang"]
        assert "jiho" not in await searched(client, "김지양 님")
        assert await searched(client, "김지민양") == []  # nobody: `김지민` is nobody's name, and never `김지`


@pytest.mark.anyio
@pytest.mark.usefixtures("store_backend")
@pytest.mark.parametrize(("recipient", "wanted"), list(HONORIFIC_QUERIES.items()))
async def test_a_recipient_is_named_with_honorifics_and_titles(tmp_path: Path, recipient: str, wanted: str) -> None:
    async with Client(server_for(services=await directory(tmp_path), user="me")) as client:
        sent: Any = await client.call_tool("send_message_to_user", {"recipient": recipient, "message": "회의 5분 전"})
    assert not sent.is_error, sent.content
    assert sent.structured_content["recipient_id"] == wanted
