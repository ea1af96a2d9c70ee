"""The shared store's engine on PostgreSQL (`--database-url`), for several replicas: the connection pool
(`database`), the search SQL every component shares (`search`), and the backend that opens each
component's PostgreSQL implementation over it (`backend`). Search terms come from the same analyzer as
on SQLite and live in `tsvector` columns (GIN-indexed, no server-side parsing or stemming)."""
