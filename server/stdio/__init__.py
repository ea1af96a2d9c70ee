"""Serving MCP over stdio: the lean front that answers plain messages before the SDK loads, stdin and stdout as
asyncio pipes, the line checks, the one session both paths share, and the SDK's transport."""
