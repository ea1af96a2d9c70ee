"""Who a caller is to the assistant: a member (the full toolsets) or a guest (their invitations only)."""

from __future__ import annotations

from typing import Literal, get_args

Role = Literal["member", "guest"]
ROLES: tuple[Role, ...] = get_args(Role)
