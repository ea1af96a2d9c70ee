"""Whether `--demo` may seed a store: one that holds nothing, or nothing but the caller's own directory entry.

A first call (the README's `get_day_of_week`, a host's first tool call) enters the caller in the user directory
by id alone; the store holds nothing else, so the demo seeds it as it would an empty one (its own record of the
caller replaces that entry). Anything more (another user, a name, an event, a memory, a message) is the user's
data, and the demo adds nothing.
"""

from __future__ import annotations

from pathlib import Path

from toolsets.infra.store.users import UserRecord
from toolsets.services import Services

# rows a first call never writes: any of them means the store holds someone's data
_DATA_TABLES = ("user_groups", "events", "invitations", "inbox", "memories")


async def only_first_call(services: Services, you: str) -> bool:
    """True when the store is empty, or holds only `you` as a first call enters them (an id, nothing else)."""
    users = services.users
    if await users.is_empty():
        return True
    if await services.backend.count_rows("users") != 1:
        return False
    entry = await users.get(you)
    if entry is None or entry != UserRecord(id=you, role=entry.role):
        return False
    for table in _DATA_TABLES:
        if await services.backend.count_rows(table):
            return False
    return True


def not_seeded_note(data_dir: Path) -> str:
    """What the guide says when `--demo` added nothing (the same advice as the warning on stderr)."""
    return (
        f"`--demo`: 이 저장소({data_dir})에 이미 데이터가 있어 데모 데이터를 넣지 않았습니다. "
        f"새 폴더로 시작하세요: `truloop-mcp --demo --data-dir {data_dir}-demo`\n"
        f"`--demo`: the store in {data_dir} already has data, so no demo data was added; use a separate folder: "
        f"`truloop-mcp --demo --data-dir {data_dir}-demo`"
    )
