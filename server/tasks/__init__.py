"""MCP tasks: a tool call the client polls instead of waiting on, kept in the task store (docs/devices.md)."""
