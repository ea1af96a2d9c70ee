"""user toolset through the MCP client, both eras: profiles, search, bulk ids, privacy."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.people import directory
from tests.support import MODES, error_of, server_for
from toolsets.infra.contacts import parse_contact, parse_contact_or_none

pytestmark = pytest.mark.usefixtures("store_backend")  # every test on SQLite, then on PostgreSQL


@pytest.mark.anyio
@MODES
async def test_own_profile_is_full_and_others_are_public_only(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services), mode=mode) as client:
        me = (await client.call_tool("get_user_profile", {})).structured_content
        bob = (await client.call_tool("get_user_profile", {"user_id": "bob"})).structured_content
        nobody = await client.call_tool("get_user_profile", {"user_id": "zed"})
    assert me is not None and me["is_self"] and me["phone"] == "+821012345678"
    assert me["email"] == "alice@example.com" and me["groups"] == ["team"]
    assert bob is not None and not bob["is_self"] and bob["display_name"] == "Bob Lee"
    assert bob["phone"] is None and bob["email"] is None and bob["groups"] is None and bob["role"] is None
    assert nobody.is_error and error_of(nobody)["code"] == "not_found"  # type: ignore[index]


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(
    "contact", ["010-2222-3333", "+82 10 2222 3333", "+821022223333", "0082 10 2222 3333", "Bob@Example.COM"]
)
async def test_search_by_contact_normalises_phone_and_email(tmp_path: Path, mode: str, contact: str) -> None:
    """With by=contact, and without `by` (a phone number or email is detected as a contact)."""
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services), mode=mode) as client:
        by_contact = await client.call_tool("search_users", {"query": contact, "by": "contact"})
        detected = await client.call_tool("search_users", {"query": contact})
    bob = [{"id": "bob", "username": "bob", "display_name": "Bob Lee"}]  # public fields only
    assert by_contact.structured_content == {"query": contact, "by": "contact", "users": bob}
    assert detected.structured_content == {"query": contact, "by": "contact", "users": bob}


@pytest.mark.anyio
async def test_search_without_by_falls_back_to_names(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="bob", services=services)) as client:
        nobody = await client.call_tool("search_users", {"query": "010-9999-0000"})
        by_name = await client.call_tool("search_users", {"query": "Alice"})
    assert nobody.structured_content == {"query": "010-9999-0000", "by": "username", "users": []}
    assert by_name.structured_content["by"] == "username"  # type: ignore[index]
    assert [u["id"] for u in by_name.structured_content["users"]] == ["alice"]  # type: ignore[index]


@pytest.mark.anyio
@MODES
async def test_search_by_username_and_group(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services), mode=mode) as client:
        by_name = await client.call_tool("search_users", {"query": "LEE", "by": "username"})
        team = await client.call_tool("search_users", {"query": "Team", "by": "group"})
        ops = await client.call_tool("search_users", {"query": "ops", "by": "group"})
        not_contact = await client.call_tool("search_users", {"query": "bob", "by": "contact"})
        bad_by = await client.call_tool("search_users", {"query": "bob", "by": "shoe size"})
    assert [u["id"] for u in by_name.structured_content["users"]] == ["bob"]  # type: ignore[index]
    assert sorted(u["id"] for u in team.structured_content["users"]) == ["alice", "bob"]  # type: ignore[index]
    assert ops.is_error and error_of(ops)["code"] == "forbidden"  # type: ignore[index]
    assert not_contact.is_error and error_of(not_contact)["code"] == "validation"  # type: ignore[index]
    assert bad_by.is_error and error_of(bad_by)["code"] == "validation"  # type: ignore[index]


@pytest.mark.anyio
@MODES
async def test_get_user_eids_answers_each_input(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services), mode=mode) as client:
        result = await client.call_tool(
            "get_user_eids", {"identifiers": ["@bob", "carol@example.com", "010-1234-5678", "nobody", "carol"]}
        )
        too_many = await client.call_tool("get_user_eids", {"identifiers": [f"u{i}" for i in range(101)]})
        empty = await client.call_tool("get_user_eids", {"identifiers": []})
    answers = result.structured_content["results"]  # type: ignore[index]
    assert [(a["identifier"], a["status"], a["eid"]) for a in answers] == [
        ("@bob", "found", "bob"),
        ("carol@example.com", "found", "carol"),
        ("010-1234-5678", "found", "alice"),
        ("nobody", "not_found", None),
        ("carol", "found", "carol"),
    ]
    assert too_many.is_error and "at most 100" in error_of(too_many)["reason"]  # type: ignore[index]
    assert empty.is_error and error_of(empty)["code"] == "validation"  # type: ignore[index]


@pytest.mark.anyio
async def test_fresh_store_knows_the_caller(tmp_path: Path) -> None:
    """On an empty directory the stdio user still has a profile (entered on first use)."""
    async with Client(server_for(user="solo", data_dir=tmp_path / "fresh")) as client:
        me = await client.call_tool("get_user_profile", {})
        found = await client.call_tool("search_users", {"query": "someone"})
    assert me.structured_content["id"] == "solo" and me.structured_content["is_self"]  # type: ignore[index]
    assert found.structured_content["users"] == []  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("010-1234-5678", ("phone", "+821012345678")),
        ("+82 10 1234 5678", ("phone", "+821012345678")),
        ("0082 (10) 1234.5678", ("phone", "+821012345678")),
        ("Name@Example.COM", ("email", "name@example.com")),
    ],
)
def test_contacts_have_one_normal_form(text: str, expected: tuple[str, str]) -> None:
    assert parse_contact(text) == expected
    assert parse_contact_or_none(text) == expected


@pytest.mark.parametrize("text", ["minji", "12-34", "name@example", "010-1234-5678-9999-0000"])
def test_what_is_neither_a_phone_nor_an_email_raises_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="not a phone number"):
        parse_contact(text)
    assert parse_contact_or_none(text) is None


@pytest.mark.anyio
async def test_a_hyphenated_romanised_name_finds_the_name_written_as_one_word(tmp_path: Path) -> None:
    """`Seo-yeon` finds `Kim Seoyeon` and `Seo-yeon Park`; `seoyeon` finds both too (compounds, both ways)."""
    from toolsets.infra.store.users import UserRecord

    services = await directory(tmp_path)
    await services.users.import_users(
        [
            UserRecord(id="sy1", username="seoyeon.kim", display_name="Kim Seoyeon", role="member"),
            UserRecord(id="sy2", username="sypark", display_name="Seo-yeon Park", role="member"),
        ]
    )
    async with Client(server_for(user="alice", services=services)) as client:
        hyphenated = await client.call_tool("search_users", {"query": "Seo-yeon"})
        joined = await client.call_tool("search_users", {"query": "seoyeon"})
    assert sorted(u["id"] for u in hyphenated.structured_content["users"]) == ["sy1", "sy2"]  # type: ignore[index]
    assert sorted(u["id"] for u in joined.structured_content["users"]) == ["sy1", "sy2"]  # type: ignore[index]
