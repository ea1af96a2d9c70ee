"""What the server cannot answer itself: the device bridge (agent-rpc), and asking the MCP client (elicitation,
sampling)."""
