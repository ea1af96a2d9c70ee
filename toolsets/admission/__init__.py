"""The one admission step every request takes before it reaches the tools, the resources or the prompts: the
caller's per-user bounds (calls a minute, calls at once), shared across replicas through Redis, and the audit line
of the requests the call pipeline does not see (resource reads, prompt gets)."""
