"""user toolset: profiles, finding people by contact, username or group, and bulk id lookup."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from toolsets.annotations import READ_ONLY
from toolsets.context import ToolContext
from toolsets.errors import ToolError, ToolInputError
from toolsets.services import services_of
from toolsets.store.users import UserRecord
from toolsets.text import canonical_key, strip_invisible
from toolsets.toolset import Toolset
from toolsets.validation import normalize_email, normalize_phone

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


class UserSearchResult(BaseModel):
    query: str = Field(description="What was searched for")
    by: str = Field(description="contact, username or group")
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
    ctx: ToolContext,
    user_id: Annotated[
        str | None, Field(description="Id of the user to show; omit for your own profile", max_length=200)
    ] = None,
) -> UserProfile:
    """Show a user's profile: your own in full (contacts, groups, role), anyone else's public fields only."""
    users = services_of(ctx).users
    target = user_id.strip() if user_id else ctx.caller.user_id
    user = await users.get(target)
    if user is None:
        if target == ctx.caller.user_id:
            return UserProfile(id=target, username=None, display_name=None, is_self=True, role=ctx.caller.role)
        raise ToolError(
            f"No user with id {target!r}. Use search_users to find someone by name or contact.", code="not_found"
        )
    if user.id != ctx.caller.user_id:
        return UserProfile(**public(user).model_dump(), is_self=False)
    return UserProfile(**user.model_dump(), is_self=True)


@user_toolset.tool(hints=READ_ONLY)
async def search_users(
    ctx: ToolContext,
    query: Annotated[
        str,
        Field(
            description="A phone number or email (by=contact), part of a username or name (by=username), "
            "or a group name (by=group)",
            min_length=1,
            max_length=200,
        ),
    ],
    by: Annotated[
        Literal["contact", "username", "group"],
        Field(description="contact: exact phone/email; username: name or username contains; group: its members"),
    ] = "username",
) -> UserSearchResult:
    """Find users by phone number or email, by (part of) their username or name, or list a group's members.
    Group members are listed only for groups you belong to."""
    users = services_of(ctx).users
    text = strip_invisible(query)  # NUL and other control characters are never part of a query
    if not any(char.isalnum() for char in text):
        raise ToolInputError(
            "query must contain letters or digits: a name or username (e.g. 'minji' or '김민지'), "
            "a phone number or email (by=contact), or a group name (by=group)."
        )
    if by == "contact":
        if normalize_email(text) is None and normalize_phone(text, users.country) is None:
            raise ToolInputError(f"by=contact needs a phone number or an email address; got {query!r}.")
        found = await users.find_by_contact(text)
    elif by == "username":
        found = await users.find_by_username(text, MAX_SEARCH_RESULTS)
    else:
        me = await users.get(ctx.caller.user_id)
        if me is None or canonical_key(text) not in {canonical_key(group) for group in me.groups}:
            raise ToolError(
                f"You are not a member of a group named {text!r}; you can list only your own groups' members.",
                code="forbidden",
            )
        found = await users.group_members(text)
    return UserSearchResult(query=text, by=by, users=[public(user) for user in found[:MAX_SEARCH_RESULTS]])


@user_toolset.tool(hints=READ_ONLY)
async def get_user_eids(
    ctx: ToolContext,
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
    users = services_of(ctx).users
    answers = []
    for identifier in identifiers:
        found = await users.resolve(identifier)
        if len(found) == 1:
            answers.append(
                EidAnswer(identifier=identifier, status="found", eid=found[0].id, display_name=found[0].display_name)
            )
        else:
            answers.append(EidAnswer(identifier=identifier, status="ambiguous" if found else "not_found", eid=None))
    return EidLookup(results=answers)
