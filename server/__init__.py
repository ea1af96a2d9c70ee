"""The MCP assembly of truloop-mcp."""

__version__ = "0.1.0"
