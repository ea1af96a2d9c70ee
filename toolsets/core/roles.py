"""Who a caller is to the assistant: a member (the full toolsets) or a guest (their invitations only).

A token may also name an `operator`: a member to the tools who may also read the server's `/metrics`
(docs/metrics.md). The operator role lives on the token only; to every tool its caller is a member.
"""

from __future__ import annotations

from typing import Literal, get_args

Role = Literal["member", "guest"]
ROLES: tuple[Role, ...] = get_args(Role)

OPERATOR = "operator"
TokenRole = Literal["member", "guest", "operator"]
TOKEN_ROLES: tuple[TokenRole, ...] = get_args(TokenRole)


def tool_role(token_role: object) -> Role:
    """The role a token's `role` claim gives its caller among the tools: an operator is a member; anything but a
    member or an operator is a guest (the least privilege)."""
    return "member" if token_role in ("member", OPERATOR) else "guest"
