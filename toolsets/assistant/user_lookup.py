"""Whether an identifier names exactly one user: the one check behind inviting, relaying and id lookup."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from toolsets.core.errors import ErrorCode, ToolError
from toolsets.infra.store.users import UserRecord, UserStore

Status = Literal["found", "not_found", "ambiguous"]
FIND_PEOPLE_HINT = "use search_users to find the right person"


@dataclass(frozen=True, slots=True)
class Resolution:
    identifier: str  # as given
    status: Status
    user: UserRecord | None  # the one user named, when status is "found"


async def resolve(users: UserStore, identifier: str) -> Resolution:
    """Whom an id, username, email or phone number names: one user, nobody, or several."""
    matches = await users.resolve(identifier)
    if len(matches) == 1:
        return Resolution(identifier, "found", matches[0])
    return Resolution(identifier, "ambiguous" if matches else "not_found", None)


async def resolve_one(users: UserStore, identifier: str) -> UserRecord:
    """The one user `identifier` names; otherwise a not_found error that says how to find them."""
    found = await resolve(users, identifier)
    if found.user is None:
        problem = "Several users match" if found.status == "ambiguous" else "No user matches"
        raise ToolError(f"{problem} {identifier!r}; {FIND_PEOPLE_HINT}.", code=ErrorCode.NOT_FOUND)
    return found.user
