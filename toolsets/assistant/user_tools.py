"""user toolset: profiles, finding people by contact, username or group, and bulk id lookup."""

import re
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from toolsets.assistant.user_lookup import FIND_PEOPLE_HINT, find_by_name, resolve
from toolsets.assistant.validation import contact
from toolsets.core.annotations import READ_ONLY
from toolsets.core.context import ToolContext
from toolsets.core.errors import ErrorCode, ToolError, ToolInputError
from toolsets.core.toolset import Toolset
from toolsets.infra.contacts import parse_contact_or_none
from toolsets.infra.store.users import UserRecord, UserStore
from toolsets.infra.text import canonical_key, strip_invisible
from toolsets.services import Services

user_toolset = Toolset("user")

MAX_EIDS = 100
MAX_SEARCH_RESULTS = 20


class PublicProfile(BaseModel):
    id: str = Field(description="The user's id (their EID)")
    username: str | None = Field(description="Unique username, without @")
    display_name: str | None = Field(description="Name to show")


class UserProfile(PublicProfile):
    phone: str | None = Field(default=None, description="Phone number, E.164 (only on your own profile)")
    email: str | None = Field(default=None, description="Email address (only on your own profile)")
    groups: list[str] | None = Field(default=None, description="Groups you belong to (only on your own profile)")
    role: str | None = Field(default=None, description="member or guest (only on your own profile)")
    is_self: bool = Field(description="True when this is the caller's own profile")


SearchBy = Literal["contact", "username", "group"]


class UserSearchResult(BaseModel):
    query: str = Field(description="What was searched for")
    by: SearchBy = Field(description="How it was searched: contact, username or group")
    users: list[PublicProfile] = Field(description="Matching users (public fields only)")


class EidAnswer(BaseModel):
    identifier: str = Field(description="The identifier as given")
    status: Literal["found", "not_found", "ambiguous"] = Field(description="Whether it names exactly one user")
    eid: str | None = Field(description="The user's id when found")
    display_name: str | None = Field(default=None, description="The user's display name when found")


class EidLookup(BaseModel):
    results: list[EidAnswer] = Field(description="One answer per identifier, in the order given")


def public(user: UserRecord) -> PublicProfile:
    return PublicProfile(id=user.id, username=user.username, display_name=user.display_name)


@user_toolset.tool(hints=READ_ONLY)
async def get_user_profile(
    ctx: ToolContext[Services],
    user_id: Annotated[
        str | None, Field(description="Id of the user to show; omit for your own profile", max_length=200)
    ] = None,
) -> UserProfile:
    """Show a user's profile: your own in full (contacts, groups, role), anyone else's public fields only."""
    users = ctx.deps.users
    target = user_id.strip() if user_id else ctx.caller.user_id
    user = await users.get(target)
    if user is None:
        if target == ctx.caller.user_id:
            return UserProfile(id=target, username=None, display_name=None, is_self=True, role=ctx.caller.role)
        raise ToolError(f"No user with id {target!r}; {FIND_PEOPLE_HINT} by name or contact.", code=ErrorCode.NOT_FOUND)
    if user.id != ctx.caller.user_id:
        return UserProfile(**public(user).model_dump(), is_self=False)
    return UserProfile(**user.model_dump(), is_self=True)


@user_toolset.tool(hints=READ_ONLY)
async def search_users(
    ctx: ToolContext[Services],
    query: Annotated[
        str,
        Field(
            description="A phone number or email, part of a username or name, or a group name (by=group)",
            min_length=1,
            max_length=200,
        ),
    ],
    by: Annotated[
        Literal["auto", "contact", "username", "group"],
        Field(
            description="contact: exact phone/email; username: name or username contains; group: its members; "
            "auto: a phone number or email as a contact, anything else as a name"
        ),
    ] = "auto",
) -> UserSearchResult:
    """Find users by phone number or email, by (part of) their username or name, or list a group's members.
    Group members are listed only for groups you belong to."""
    users = ctx.deps.users
    text = strip_invisible(query)  # NUL and other control characters are never part of a query
    if not any(char.isalnum() for char in text):
        raise ToolInputError(
            "query must contain letters or digits: a name or username (e.g. 'minji' or '김민지'), "
            "a phone number or email, or a group name (by=group)."
        )
    if by == "group":
        found = await _group_members(users, text, ctx.caller.user_id)
    elif by == "contact":
        found = await users.find_by_contact(contact(text, default_country_code=users.country).value)
    elif by == "auto" and parse_contact_or_none(text, users.country) is not None:
        by, found = "contact", await users.find_by_contact(text)
        if not found:  # a number or address nobody has may still be part of a username
            by, found = "username", await users.find_by_username(text, MAX_SEARCH_RESULTS)
    else:
        by, found = "username", await _by_name(users, text)
    return UserSearchResult(query=text, by=by, users=[public(user) for user in found[:MAX_SEARCH_RESULTS]])


# a hyphen between letters: `Seo-yeon` is also `Seoyeon` (romanised Korean names are written both ways)
_NAME_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u2010](?=[^\W\d_])")


async def _by_name(users: UserStore, text: str) -> list[UserRecord]:
    """Users by (part of) their username or name, honorifics and titles aside (`민지님`, `준호 팀장님`); a hyphenated
    name also as its joined word, as the knowledge search treats compounds (`Seo-yeon` finds `Kim Seoyeon` and
    `Seo-yeon Park`)."""
    found = await find_by_name(users, text, MAX_SEARCH_RESULTS)
    joined = _NAME_HYPHEN.sub("", text)
    if joined != text and len(found) < MAX_SEARCH_RESULTS:
        seen = {user.id for user in found}
        found += [user for user in await find_by_name(users, joined, MAX_SEARCH_RESULTS) if user.id not in seen]
    return found


async def _group_members(users: UserStore, group: str, caller_id: str) -> list[UserRecord]:
    """The members of one of the caller's own groups."""
    me = await users.get(caller_id)
    if me is None or canonical_key(group) not in {canonical_key(name) for name in me.groups}:
        raise ToolError(
            f"You are not a member of a group named {group!r}; you can list only your own groups' members.",
            code=ErrorCode.FORBIDDEN,
        )
    return await users.group_members(group)


@user_toolset.tool(hints=READ_ONLY)
async def get_user_eids(
    ctx: ToolContext[Services],
    identifiers: Annotated[
        list[Annotated[str, Field(max_length=200)]],
        Field(description=f"Usernames, emails, phone numbers or ids (1 to {MAX_EIDS})", min_length=1),
    ],
) -> EidLookup:
    """Turn many usernames, emails or phone numbers into user ids (EIDs) at once; one answer per input."""
    if len(identifiers) > MAX_EIDS:
        raise ToolInputError(
            f"get_user_eids takes at most {MAX_EIDS} identifiers per call; got {len(identifiers)}. "
            "Split the list into several calls."
        )
    users = ctx.deps.users
    answers = []
    for identifier in identifiers:
        found = await resolve(users, identifier)
        answers.append(
            EidAnswer(
                identifier=identifier,
                status=found.status,
                eid=found.user.id if found.user else None,
                display_name=found.user.display_name if found.user else None,
            )
        )
    return EidLookup(results=answers)
