"""Whether an identifier names exactly one user: the one check behind inviting, relaying and id lookup.

An id, a username, an email or a phone number is looked up exactly; anything else (a name, in Korean or in
Latin letters) is matched the way `search_users` matches names, so `준호` names 이준호 when he is the only one;
honorifics and titles aside (`민지님`, `준호 팀장님께`) when the name as written finds nobody.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from toolsets.core.errors import ErrorCode, ToolError
from toolsets.infra.store.users import UserRecord, UserStore
from toolsets.infra.text.names import names_person, without_honorifics

Status = Literal["found", "not_found", "ambiguous"]
FIND_PEOPLE_HINT = "use search_users to find the right person"
MAX_CANDIDATES = 5  # named in an ambiguity message
STRIPPED_SCAN = 100  # users a name without its honorific is checked against (it must equal a unit of theirs)


@dataclass(frozen=True, slots=True)
class Resolution:
    identifier: str  # as given
    status: Status
    user: UserRecord | None  # the one user named, when status is "found"
    candidates: list[UserRecord] = field(default_factory=list)  # the users it may name, when "ambiguous"

    def described(self) -> str:
        """`'준호' (이준호 = junho, 박준호 = junho.park)`: the identifier, and whom it may name."""
        if not self.candidates:
            return repr(self.identifier)
        names = ", ".join(f"{user.display_name or user.username} = {user.id}" for user in self.candidates)
        return f"{self.identifier!r} ({names})"


async def resolve(users: UserStore, identifier: str) -> Resolution:
    """Whom an id, username, email, phone number or name names: one user, nobody, or several."""
    matches = await users.resolve(identifier)
    if not matches and identifier.strip():
        matches = await find_by_name(users, identifier.strip(), MAX_CANDIDATES + 1)
    if len(matches) == 1:
        return Resolution(identifier, "found", matches[0])
    if matches:
        return Resolution(identifier, "ambiguous", None, matches[:MAX_CANDIDATES])
    return Resolution(identifier, "not_found", None)


async def find_by_name(users: UserStore, text: str, limit: int) -> list[UserRecord]:
    """Users by (part of) their username or name; when the text as written finds nobody, by the name without
    its honorifics or titles (`민지님`, `김민지 님`, `준호 팀장님한테`), each found user named by it as a whole."""
    found = await users.find_by_username(text, limit)
    if found:
        return found
    for name in without_honorifics(text):
        candidates = await users.find_by_username(name, max(limit, STRIPPED_SCAN))
        named = [user for user in candidates if names_person(name, user.username, user.display_name)]
        if named:
            return named[:limit]
    return []


async def resolve_one(users: UserStore, identifier: str) -> UserRecord:
    """The one user `identifier` names; otherwise a not_found error that says how to find them."""
    found = await resolve(users, identifier)
    if found.user is None:
        problem = "Several users match" if found.status == "ambiguous" else "No user matches"
        raise ToolError(f"{problem} {found.described()}; {FIND_PEOPLE_HINT}.", code=ErrorCode.NOT_FOUND)
    return found.user
