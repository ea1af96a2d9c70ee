"""The zone and language the user directory holds for each user, read for every request and kept for a short while
(an import reaches running servers within `FRESH_SECONDS`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from toolsets.infra.locality import Locality, locale_or_none, zone_or_none

if TYPE_CHECKING:
    from toolsets.infra.store.users import UserStore

logger = logging.getLogger("truloop.directory")


class DirectoryLocalities:
    FRESH_SECONDS = 30.0
    KEPT = 10_000  # users remembered (then forgotten all at once)

    def __init__(self, users: Callable[[], UserStore]) -> None:
        """`users`: the directory, opened when first asked (a front's start, or its first request)."""
        self._users = users
        self._kept: dict[str, tuple[float, Locality]] = {}

    def fresh(self, user_id: str) -> Locality | None:
        """What the directory said of `user_id` within `FRESH_SECONDS`, without awaiting (None: ask `of`)."""
        kept = self._kept.get(user_id)
        return kept[1] if kept is not None and kept[0] > time.monotonic() else None

    async def of(self, user_id: str) -> Locality:
        """What the directory says of `user_id` (nothing for a user it does not hold, or while it cannot be read)."""
        kept = self.fresh(user_id)
        if kept is not None:
            return kept
        try:
            user = await self._users().get(user_id)
        except Exception:
            logger.warning("could not read the directory entry of %s; using the server's zone", user_id, exc_info=True)
            return Locality()
        found = Locality() if user is None else Locality(zone_or_none(user.timezone), locale_or_none(user.locale))
        if len(self._kept) >= self.KEPT:
            self._kept.clear()
        self._kept[user_id] = (time.monotonic() + self.FRESH_SECONDS, found)
        return found
