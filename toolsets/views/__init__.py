"""What an MCP host shows beside the tools, as plain Python (no `mcp`): the resources a caller may read (the docs
folder, their inbox and events, a guide), the prompts a host lists as commands, the values completion offers, and
who hears that a resource changed. `server/mcp/resources.py`, `server/mcp/prompt_front.py` and
`server/mcp/completion_front.py` put them on the wire.
"""
