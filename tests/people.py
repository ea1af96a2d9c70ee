"""A shared little directory for the user, event, guest and relay tests."""

from __future__ import annotations

from pathlib import Path

from tests.support import services_for
from toolsets.infra.store.users import UserRecord
from toolsets.services import Services

PEOPLE = [
    UserRecord(id="alice", username="alice", display_name="Alice Kim", phone="010-1234-5678",
               email="Alice@Example.com", groups=["team"]),
    UserRecord(id="bob", username="bob", display_name="Bob Lee", phone="+82 10 2222 3333",
               email="bob@example.com", groups=["team", "ops"]),
    UserRecord(id="carol", username="carol", display_name="Carol Park", email="carol@example.com", groups=["ops"]),
    UserRecord(id="gus", username="gus", display_name="Gus Guest", role="guest", email="gus@example.com"),
    UserRecord(id="gwen", username="gwen", display_name="Gwen Guest", role="guest"),
]  # fmt: skip


async def directory(tmp_path: Path) -> Services:
    services = services_for(tmp_path / "store")
    await services.users.import_users(PEOPLE)
    return services
