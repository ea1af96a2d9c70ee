"""Stored runs: a call kept in a store and run later, as the caller who made it, by whichever replica takes it (an
MCP task's run, a schedule's tick)."""
