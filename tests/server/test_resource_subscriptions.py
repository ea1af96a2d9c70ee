"""Subscriptions to resources, in both protocol eras: a changed document (noticed when the knowledge index
re-indexes) or a new inbox message reaches the sessions subscribed to it, and only those; across replicas through
the deployment's Redis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from pydantic import SecretStr

from server.mcp.resource_relay import RedisChangeRelay
from server.mcp.resources import MAX_SUBSCRIPTIONS_PER_SESSION
from server.runtime.composition import Deployment
from server.runtime.server_factory import build_server
from tests.host_views_data import Store, host_store
from tests.support import eventually, server_for, services_for, settings
from toolsets.infra.redis_client import redis_of
from toolsets.views.changes import ResourceChanges

HANDBOOK = "truloop://docs/Team%20Handbook.md"
# resources/subscribe is the handshake era's (the SDK client warns that 2026-07-28 replaced it with listen)
pytestmark = pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    found = await host_store(tmp_path)
    await found.services.knowledge.refresh()  # the first index: every document is new, before anyone subscribes
    return found


class Updates:
    """The `notifications/resources/updated` URIs a session heard."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self.heard = anyio.Event()

    async def __call__(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            self.uris.append(str(root.params.uri))
            self.heard.set()


def touch(store: Store, text: str = "\n## Monitors\n\nTwo screens for everyone.\n") -> None:
    path = store.docs / "Team Handbook.md"
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.mark.anyio
async def test_a_subscribed_session_hears_of_a_changed_document_and_an_unsubscribed_one_does_not(
    store: Store,
) -> None:
    server = server_for("member", services=store.services, user="alice")
    subscribed, other = Updates(), Updates()
    async with (
        Client(server, mode="legacy", message_handler=subscribed) as client,
        Client(server, mode="legacy", message_handler=other) as bystander,
    ):
        await client.subscribe_resource(HANDBOOK)
        await client.subscribe_resource("truloop://docs/notes.txt")
        await bystander.list_resources()
        touch(store)
        await bystander.call_tool("search_knowledge_base", {"query": "monitors"})  # too soon after the first index
        await store.services.knowledge.refresh()  # the index notices the change
        with anyio.fail_after(10):
            await subscribed.heard.wait()
        await client.unsubscribe_resource(HANDBOOK)
        touch(store, "\nMore.\n")
        await store.services.knowledge.refresh()
        await client.list_resources()  # a round trip: anything sent before it has arrived
        await bystander.list_resources()
    assert subscribed.uris == [HANDBOOK]  # not notes.txt (unchanged), and nothing after unsubscribing
    assert other.uris == []


@pytest.mark.anyio
async def test_a_new_message_reaches_the_recipients_subscribed_session_only(store: Store) -> None:
    alice_hears, carol_hears = Updates(), Updates()
    alice = server_for("member", services=store.services, user="alice")
    carol = server_for("member", services=store.services, user="carol")
    bob = server_for("member", services=store.services, user="bob")
    async with (
        Client(alice, mode="legacy", message_handler=alice_hears) as alice_client,
        Client(carol, mode="legacy", message_handler=carol_hears) as carol_client,
        Client(bob, mode="legacy") as bob_client,
    ):
        await alice_client.subscribe_resource("truloop://inbox")
        await carol_client.subscribe_resource("truloop://inbox")
        sent = await bob_client.call_tool("send_message_to_user", {"recipient": "alice", "message": "standup moved"})
        assert not sent.is_error, sent.content
        with anyio.fail_after(10):
            await alice_hears.heard.wait()
        await carol_client.list_resources()
    assert alice_hears.uris == ["truloop://inbox"]
    assert carol_hears.uris == []


@pytest.mark.anyio
async def test_a_listen_stream_hears_of_its_resources_only(store: Store) -> None:
    """2026-07-28: `subscriptions/listen` with resource URIs; another caller's stream never hears of alice's inbox."""
    alice = server_for("member", services=store.services, user="alice")
    carol = server_for("member", services=store.services, user="carol")
    bob = server_for("member", services=store.services, user="bob")
    heard: list[Any] = []
    carol_heard: list[Any] = []

    async def drain(sub: Any, into: list[Any]) -> None:
        async for event in sub:
            into.append(event)

    async with (
        Client(alice) as alice_client,
        Client(carol) as carol_client,
        Client(bob) as bob_client,
        alice_client.listen(resource_subscriptions=["truloop://inbox", HANDBOOK]) as alice_sub,
        carol_client.listen(resource_subscriptions=["truloop://inbox"]) as carol_sub,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(drain, alice_sub, heard)
        tg.start_soon(drain, carol_sub, carol_heard)
        sent = await bob_client.call_tool("send_message_to_user", {"recipient": "alice", "message": "hello"})
        assert not sent.is_error, sent.content
        touch(store)
        await store.services.knowledge.refresh()
        await eventually(lambda: len(heard) >= 2)
        await anyio.sleep(0.2)
        tg.cancel_scope.cancel()
    assert heard == [ResourceUpdated("truloop://inbox"), ResourceUpdated(HANDBOOK)]
    assert carol_heard == []


@pytest.mark.anyio
async def test_a_change_noticed_on_one_replica_reaches_a_session_on_another(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """Two deployments on one store and one Redis (two replicas): replica A's index notices the change, replica B's
    subscribed session is told."""
    store = await host_store(tmp_path)
    data = tmp_path / "store"

    clients = [redis_of(redis_url), redis_of(redis_url)]

    def replica(client: Any) -> Deployment:
        services = services_for(data, resource_changes=ResourceChanges(RedisChangeRelay(client, prefix=redis_prefix)))
        shared = settings(redis_url=SecretStr(redis_url), redis_prefix=redis_prefix, data_dir=data)
        return Deployment(shared, services=services)

    a, b = (replica(client) for client in clients)
    await a.services.knowledge.refresh()
    updates = Updates()
    server_b = build_server(b.settings, deployment=b)
    try:
        async with a, b:
            for deployment in (a, b):
                relay = deployment.services.resource_changes.relay  # type: ignore[union-attr]
                assert relay is not None
                with anyio.fail_after(10):
                    await relay.listening.wait()  # type: ignore[attr-defined]
            async with Client(server_b, mode="legacy", message_handler=updates) as client:
                await client.subscribe_resource(HANDBOOK)
                touch(store)
                await a.services.knowledge.refresh()
                with anyio.fail_after(10):
                    await updates.heard.wait()
    finally:
        for redis_client in clients:
            await redis_client.aclose()
    assert updates.uris == [HANDBOOK]


async def refusal(call: Any) -> types.ErrorData:
    with pytest.raises(MCPError) as caught:
        await call
    assert caught.value.error.code == types.INVALID_PARAMS, caught.value.error
    return caught.value.error


@pytest.mark.anyio
async def test_subscriptions_are_capped_per_session(store: Store) -> None:
    for n in range(MAX_SUBSCRIPTIONS_PER_SESSION + 5):
        (store.docs / "many" / f"d{n:03}.md").parent.mkdir(exist_ok=True)
        (store.docs / "many" / f"d{n:03}.md").write_text(f"# {n}\n", encoding="utf-8")
    uris = [f"truloop://docs/many/d{n:03}.md" for n in range(MAX_SUBSCRIPTIONS_PER_SESSION + 5)]
    server = server_for("member", services=store.services, user="alice")
    async with Client(server, mode="legacy") as client, Client(server, mode="legacy") as another:
        for uri in uris[:MAX_SUBSCRIPTIONS_PER_SESSION]:
            await client.subscribe_resource(uri)
        await client.subscribe_resource(uris[0])  # one already held: fine
        past = await refusal(client.subscribe_resource(uris[MAX_SUBSCRIPTIONS_PER_SESSION]))
        await client.unsubscribe_resource(uris[0])  # frees one
        await client.subscribe_resource(uris[MAX_SUBSCRIPTIONS_PER_SESSION])
        await refusal(client.subscribe_resource(uris[MAX_SUBSCRIPTIONS_PER_SESSION + 1]))
        await another.subscribe_resource(uris[-1])  # per session: another session has its own
    assert "Subscription limit reached" in past.message and str(MAX_SUBSCRIPTIONS_PER_SESSION) in past.message


@pytest.mark.anyio
async def test_unknown_uris_are_refused_with_the_error_read_gives(store: Store) -> None:
    async with Client(server_for("member", services=store.services, user="alice"), mode="legacy") as client:
        for uri in (
            "truloop://docs/missing.md",
            "truloop://nothing",
            "truloop://events/nope",
            "truloop://docs/a%00.md",
        ):
            subscribing = await refusal(client.subscribe_resource(uri))
            reading = await refusal(client.read_resource(uri))
            assert subscribing.message == reading.message, uri
        await client.subscribe_resource(HANDBOOK)  # what exists is fine


@pytest.mark.anyio
async def test_a_guest_cannot_subscribe_to_what_they_cannot_read(store: Store) -> None:
    async with Client(server_for("guest", services=store.services, user="gus"), mode="legacy") as client:
        for uri in (HANDBOOK, "truloop://inbox", f"truloop://events/{store.bob_event}"):
            subscribing = await refusal(client.subscribe_resource(uri))
            reading = await refusal(client.read_resource(uri))
            assert subscribing.message == reading.message, uri
        await client.subscribe_resource(f"truloop://events/{store.gus_event}")  # invited: fine
