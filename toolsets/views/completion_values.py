"""The values completion offers, scoped to the caller: people (Korean names and their Latin spelling, found the way
`search_users` finds them), the ids of events the caller can see, and the paths of the documents.

Each source returns at most `MAX_VALUES` values and whether there were more (`Completed`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolsets.views.scope import ViewScope

if TYPE_CHECKING:
    from toolsets.services import Services

MAX_VALUES = 100
PEOPLE_LOOKED_UP = 60  # users matched per completion (each may give two values: 김민지 and Kim Minji)
EVENTS_BACK = dt.timedelta(days=7)
EVENTS_AHEAD = dt.timedelta(days=366)


@dataclass(frozen=True, slots=True)
class Completed:
    values: list[str]
    total: int | None = None
    has_more: bool = False


def bounded(values: list[str], *, more: bool = False) -> Completed:
    """At most `MAX_VALUES` of `values`, without duplicates, in order."""
    unique = list(dict.fromkeys(values))
    total = None if more else len(unique)
    return Completed(unique[:MAX_VALUES], total=total, has_more=more or len(unique) > MAX_VALUES)


class Completions:
    def __init__(self, services: Services | None) -> None:
        self._services = services

    async def people(self, scope: ViewScope, partial: str) -> Completed:
        """Names for a people argument; in a comma-separated list, the last name is completed (`bob, 민` ->
        `bob, 김민지`, `bob, Kim Minji`)."""
        from toolsets.infra.text import strip_invisible
        from toolsets.infra.text.romanize import latin_name

        if self._services is None or not scope.people:
            return Completed([])
        head, _, last = partial.rpartition(",")
        prefix = f"{head.strip()}, " if head.strip() else ""
        needle = strip_invisible(last).strip()
        if not any(char.isalnum() for char in needle):
            return Completed([])
        found = await self._services.users.find_by_username(needle, PEOPLE_LOOKED_UP + 1)
        values: list[str] = []
        for user in found[:PEOPLE_LOOKED_UP]:
            name = user.display_name or user.username or user.id
            values.append(prefix + name)
            latin = latin_name(name)
            if latin:
                values.append(prefix + latin)
        return bounded(values, more=len(found) > PEOPLE_LOOKED_UP)

    async def events(self, scope: ViewScope, partial: str) -> Completed:
        """Ids of the events the caller can see whose id starts with, or whose title contains, `partial`."""
        services = self._services
        if services is None or not scope.events:
            return Completed([])
        if scope.invitations_only:
            events = await services.events.invited_events(scope.user_id)
        else:
            now = dt.datetime.now(dt.UTC)
            events = await services.events.list_for(scope.user_id, now - EVENTS_BACK, now + EVENTS_AHEAD)
        needle = partial.strip().casefold()
        by_id = [e.id for e in events if e.id.casefold().startswith(needle)]
        by_title = [e.id for e in events if needle and needle in e.title.casefold()]
        return bounded(by_id + by_title)

    async def documents(self, scope: ViewScope, partial: str) -> Completed:
        """Paths of the documents that start with `partial`, then those that contain it (without case)."""
        services = self._services
        if services is None or not scope.docs:
            return Completed([])
        from toolsets.views.docs import list_documents

        paths = [doc.path for doc in await list_documents(services.docs_dir)]
        needle = partial.strip().casefold()
        starting = [path for path in paths if path.casefold().startswith(needle)]
        inside = [path for path in paths if needle and needle in path.casefold()]
        return bounded(starting + inside)
