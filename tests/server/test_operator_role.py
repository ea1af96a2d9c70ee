"""The operator role: a token role that reads /metrics and is a member to every tool (docs/metrics.md)."""

from __future__ import annotations

import jwt
import pytest
from pydantic import SecretStr

from server.auth.identity import ClaimNames, JwtVerifier, Surface, caller_from_claims, is_operator
from server.cli import token_command
from tests.support import AUDIENCE, SECRET, token
from toolsets.core.context import Caller
from toolsets.core.roles import tool_role

pytestmark = pytest.mark.timeout(30)


@pytest.mark.anyio
async def test_a_static_operator_token_is_accepted_and_its_caller_is_a_member() -> None:
    verifier = JwtVerifier(SecretStr(SECRET), audiences=(AUDIENCE,))
    access = await verifier.check(token(sub="ops", role="operator"))
    assert access.claims is not None and is_operator(access.claims)
    caller = caller_from_claims(access.claims, Caller("local"))
    assert caller.user_id == "ops" and caller.role == "member"
    member = await verifier.check(token(role="member"))
    assert not is_operator(member.claims) and not is_operator(None)


def test_an_operator_gets_each_surfaces_member_profile() -> None:
    surface = Surface("notification-safe", Caller("local"), "member")
    assert surface._profile_of(tool_role("operator")) == "notification-safe"
    assert surface._profile_of(tool_role("guest")) == "guest"
    assert tool_role("admin") == "guest" and tool_role(None) == "guest"


@pytest.mark.parametrize(
    ("roles", "expected"),
    [(["offline_access", "operator"], "operator"), (["member", "operator"], "operator"), (["member"], "member"),
     ("operator", "operator"), (["uma_authorization"], "guest")],
)  # fmt: skip
def test_an_issuers_role_claim_holding_operator_names_an_operator(roles: object, expected: str) -> None:
    verifier = JwtVerifier(audiences=(AUDIENCE,), claim_names=ClaimNames(role="realm_access.roles"))
    role, _ = verifier._mapped_role_and_groups({"realm_access": {"roles": roles}})
    assert role == expected


def test_truloop_token_mints_an_operator_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRULOOP_JWT_SECRET", SECRET)
    token_command.run(["--user", "ops", "--role", "operator", "--url", "http://127.0.0.1:8000/mcp"])
    minted = capsys.readouterr().out.strip()
    claims = jwt.decode(minted, SECRET, algorithms=["HS256"], audience="http://127.0.0.1:8000/mcp")
    assert claims["sub"] == "ops" and claims["role"] == "operator"
