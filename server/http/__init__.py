"""HTTP serving: the ASGI application and its routes (streamable HTTP, legacy SSE, /metrics), the guards every
connection and request passes (hosts, connection bounds, request framing, per-user caps on sessions and unread
answers), and uvicorn's server.

The MCP features the routes reach are in `server.mcp`, sign-in in `server.auth`; nothing here is imported on stdio.
"""
