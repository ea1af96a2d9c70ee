"""A store for the resource, prompt and completion tests: the test directory plus 김민지, a few docs, events of
alice's, bob's and an invitation of the guest gus, and messages in alice's and bob's inboxes."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from tests.people import PEOPLE
from tests.support import services_for
from toolsets.infra.store.events import NewEvent
from toolsets.infra.store.users import UserRecord
from toolsets.services import Services
from toolsets.views.changes import ResourceChanges

MINJI = UserRecord(id="minji", username="mj", display_name="김민지", groups=["team"])
DOCS = {
    "Team Handbook.md": "# Team Handbook\n\n## Laptop setup\n\nAsk IT for a laptop on your first day.\n",
    "policies/expenses.md": "# Expense policy\n\nKeep receipts for dinners over 50,000 won.\n",
    "notes.txt": "Plain text notes about the office wifi.\n",
}


@dataclass
class Store:
    services: Services
    docs: Path
    alice_event: str
    bob_event: str
    gus_event: str


async def host_store(folder: Path) -> Store:
    services = services_for(folder / "store", resource_changes=ResourceChanges())  # its own hub, as a deployment has
    docs = services.docs_dir
    for path, text in DOCS.items():
        (docs / path).parent.mkdir(parents=True, exist_ok=True)
        (docs / path).write_text(text, encoding="utf-8")
    await services.users.import_users([*PEOPLE, MINJI])
    soon = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(days=2)

    def event(title: str) -> NewEvent:
        return NewEvent(title=title, start=soon, end=soon + dt.timedelta(hours=1), timezone="Asia/Seoul")

    alice_event = await services.events.create("alice", event("Design review"), ["gus"])
    bob_event = await services.events.create("bob", event("Ops retro"), ["carol"])
    gus_event = await services.events.create("bob", event("Guest lunch"), ["gus"])
    await services.inbox.send(sender_id="bob", recipient_id="alice", text="Message from Bob Lee: lunch?",
                              original="lunch?", composed_by="template")  # fmt: skip
    await services.inbox.send(sender_id="alice", recipient_id="bob", text="Message from Alice Kim: secret plan",
                              original="secret plan", composed_by="template")  # fmt: skip
    return Store(services, docs, alice_event.id, bob_event.id, gus_event.id)
