"""The assistant's toolsets: plain Python + pydantic, usable in-process by any agent framework.

Never imports `mcp`, `server` or `bridge`.
"""
