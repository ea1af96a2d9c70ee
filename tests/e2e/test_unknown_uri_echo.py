"""A `resources/read` of an unknown URI quotes a short prefix of it, over a real `truloop-mcp --transport http`:
an answer never grows with what was sent (`toolsets.core.echo`)."""

from __future__ import annotations

import mcp.types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.support import MODES, SECRET, child_env, mcp_client, spawn_http_server, token

pytestmark = pytest.mark.timeout(60)

LONG = "truloop://docs/" + "a" * 200_000 + ".md"


@pytest.mark.anyio
@MODES
async def test_an_unknown_uri_of_200_kb_is_clipped_in_the_error(mode: str) -> None:
    with spawn_http_server(env=child_env(TRULOOP_JWT_SECRET=SECRET)) as base:
        async with mcp_client(base, token(), mode) as client:
            for uri in (LONG, "truloop://nowhere/" + "b" * 200_000):
                with pytest.raises(MCPError) as caught:
                    await client.read_resource(uri)
                error = caught.value.error
                assert error.code == types.INVALID_PARAMS
                said = error.model_dump_json()
                assert len(said) < 2_000, len(said)
                assert "characters)" in said
