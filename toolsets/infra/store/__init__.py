"""The store: one folder per component (users, events, inbox, memories, knowledge, schedules, feedback), each
holding its contract (a `typing.Protocol`) and its SQLite and PostgreSQL implementations side by side, and the MCP
tasks' records (`tasks/`), in memory or Redis instead; `sqlite/` and `postgres/` hold the two engines, and `backend`
picks one per deployment (`open_backend`)."""
