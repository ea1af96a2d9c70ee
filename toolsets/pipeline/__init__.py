"""Features every call passes through: audit, gates, canary routing, tracing, approval."""
