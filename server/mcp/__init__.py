"""The MCP features: the `MCPServer` of a deployment, the one call route into the front door, tool lists, resources,
prompts, completions, MCP Apps, and what every front answers on the wire.

Transport-free: `server.http` and `server.stdio` carry these over their own connections.
"""
